import { type Static, Type } from 'typebox'
import {
  listQueryProperties,
  maxLongLifetimeSeconds,
  maxTokenTtlSeconds,
  minTokenTtlSeconds,
  PaginatedSchema,
  PolicyIdSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { EntitlementCodeSchema, EntitlementCodesSchema } from './entitlements.js'
import { examplePolicy } from './examples.js'
import { HeartbeatTtlSchema, MaxActivationsSchema, MaxUsesSchema } from './licenses.js'
import { MetadataInputSchema, MetadataSchema } from './metadata.js'

/** Shortest policy or renewal duration (seconds): one hour. */
export const minDurationSeconds = 3600
/** Longest duration (seconds): 100 years, so every date stays within four-digit years. */
export const maxDurationSeconds = 100 * 366 * 24 * 3600

export const DurationSchema = Type.Integer({
  minimum: minDurationSeconds,
  maximum: maxDurationSeconds,
  description: `Seconds, at least ${minDurationSeconds} (one hour).`,
  examples: [31_536_000],
})

export const ExpirationBasisSchema = Type.Enum(['creation', 'firstActivation'], {
  description:
    '`creation`: licenses expire `duration` after they are created; `firstActivation`: they do not expire until their first activation, which sets the expiration date to that time plus `duration`.',
})
export type ExpirationBasis = Static<typeof ExpirationBasisSchema>
export const defaultExpirationBasis: ExpirationBasis = 'creation'

/** A license file's lifetime when neither the request nor a policy gives one (seconds): a year. */
export const defaultPolicyLicenseFileTtl = 365 * 24 * 60 * 60

export const LicenseFileTtlSchema = Type.Union(
  [Type.Integer({ minimum: minTokenTtlSeconds, maximum: maxLongLifetimeSeconds }), Type.Null()],
  {
    description: `Seconds a license file made for its licenses lives when the request gives no \`ttl\` (default ${defaultPolicyLicenseFileTtl}, a year; \`null\`: files that never expire). Read live from the policy. Client keys stay bounded by the product's \`clientTokenTtl\`.`,
    examples: [31_536_000],
  },
)

export const TokenTtlMaxSchema = Type.Union(
  [Type.Integer({ minimum: minTokenTtlSeconds, maximum: maxLongLifetimeSeconds }), Type.Null()],
  {
    description: `The longest \`ttl\` a token for its licenses may ask for, in seconds (\`null\`: the standard ${maxTokenTtlSeconds}, a year); set it longer for applications that stay offline for years. Read live from the policy.`,
    examples: [null],
  },
)

export const LicenseFileMetadataSchema = Type.Boolean({
  description:
    "Whether license files made for its licenses carry the license's metadata (default false: metadata may hold what the vendor does not want on customers' disks). Read live from the policy.",
})

export const SeatsPerQuantitySchema = Type.Boolean({
  description:
    'Whether a license a payment provider sells for a quantity of N gets N times `maxActivations` (default false: one license, `maxActivations` whatever the quantity). Read live: at each purchase and each subscription change.',
})

/** Portal transfers of a license made from a policy without the fields, or of a license without a policy. */
export const defaultMaxTransfers = 3
/** Seconds: 30 days. */
export const defaultTransferPeriod = 30 * 86_400

export const MaxTransfersSchema = Type.Union(
  [Type.Integer({ minimum: 0, maximum: 1_000_000 }), Type.Null()],
  {
    description:
      'How many machines a customer may deactivate from the customer portal per `transferPeriod`, counted per license in a rolling window; `null`: unlimited. API deactivations do not count. Read live from the policy.',
    examples: [3],
  },
)

export const TransferPeriodSchema = Type.Integer({
  minimum: 3600,
  maximum: 366 * 86_400,
  description: 'Seconds: the rolling window `maxTransfers` counts in (one hour to 366 days).',
  examples: [2_592_000],
})

/** The shortest and longest check-in interval and grace period a policy may set (seconds). */
export const minCheckInSeconds = 60
export const maxCheckInSeconds = 3_650 * 86_400

export const CheckInIntervalSchema = Type.Union(
  [Type.Integer({ minimum: minCheckInSeconds, maximum: maxCheckInSeconds }), Type.Null()],
  {
    description:
      'Seconds an application may go without a successful online validation of its licenses (`null`, the default: no check-in required). Every valid validation answer, token and license file carries `checkInBy`: the moment it was made plus this interval. Read live from the policy.',
    examples: [604_800],
  },
)

export const GracePeriodSchema = Type.Union(
  [Type.Integer({ minimum: 0, maximum: maxCheckInSeconds }), Type.Null()],
  {
    description:
      "Seconds after `checkInBy` an application that cannot reach the server keeps working in a `grace` state (`null`, the default: the application's own setting decides). Carried as `gracePeriod` beside `checkInBy`; it wins over the application's setting. Read live from the policy.",
    examples: [259_200],
  },
)

export const PolicyNameSchema = Type.String({
  minLength: 1,
  maxLength: 200,
  examples: ['Pro, yearly, 3 machines'],
})

export const PolicyResourceSchema = Type.Object(
  {
    id: PolicyIdSchema,
    object: Type.Literal('Policy'),
    productId: ProductIdSchema,
    name: PolicyNameSchema,
    maxActivations: MaxActivationsSchema,
    duration: Type.Union([DurationSchema, Type.Null()], { description: '`null`: licenses never expire.' }),
    expirationBasis: ExpirationBasisSchema,
    heartbeatTtl: HeartbeatTtlSchema,
    maxUses: MaxUsesSchema,
    entitlements: Type.Array(EntitlementCodeSchema, { description: 'Codes, sorted.' }),
    metadata: MetadataSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
    licenseFileTtl: LicenseFileTtlSchema,
    tokenTtlMax: TokenTtlMaxSchema,
    licenseFileMetadata: LicenseFileMetadataSchema,
    maxTransfers: MaxTransfersSchema,
    transferPeriod: TransferPeriodSchema,
    checkInInterval: CheckInIntervalSchema,
    gracePeriod: GracePeriodSchema,
    seatsPerQuantity: SeatsPerQuantitySchema,
  },
  { additionalProperties: false, examples: [examplePolicy] },
)
export type PolicyResource = Static<typeof PolicyResourceSchema>

/**
 * The settings a request may give a policy, each optional: creating a policy fills the missing ones
 * with their defaults, updating one leaves them as they are.
 */
const policySettingInputProperties = {
  maxActivations: Type.Optional(MaxActivationsSchema),
  duration: Type.Optional(Type.Union([DurationSchema, Type.Null()])),
  expirationBasis: Type.Optional(ExpirationBasisSchema),
  heartbeatTtl: Type.Optional(HeartbeatTtlSchema),
  maxUses: Type.Optional(MaxUsesSchema),
  entitlements: Type.Optional(EntitlementCodesSchema),
  metadata: Type.Optional(MetadataInputSchema),
  licenseFileTtl: Type.Optional(LicenseFileTtlSchema),
  tokenTtlMax: Type.Optional(TokenTtlMaxSchema),
  licenseFileMetadata: Type.Optional(LicenseFileMetadataSchema),
  maxTransfers: Type.Optional(MaxTransfersSchema),
  transferPeriod: Type.Optional(TransferPeriodSchema),
  checkInInterval: Type.Optional(CheckInIntervalSchema),
  gracePeriod: Type.Optional(GracePeriodSchema),
  seatsPerQuantity: Type.Optional(SeatsPerQuantitySchema),
}

export const CreatePolicyBodySchema = Type.Object(
  {
    productId: ProductIdSchema,
    name: PolicyNameSchema,
    ...policySettingInputProperties,
  },
  {
    additionalProperties: false,
    examples: [
      {
        productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
        name: 'Pro, yearly, 3 machines',
        maxActivations: 3,
        duration: 31_536_000,
        expirationBasis: 'creation',
        entitlements: ['export-pdf'],
      },
    ],
  },
)
export type CreatePolicyBody = Static<typeof CreatePolicyBodySchema>

export const UpdatePolicyBodySchema = Type.Object(
  {
    name: Type.Optional(PolicyNameSchema),
    ...policySettingInputProperties,
  },
  { additionalProperties: false, examples: [{ entitlements: ['export-pdf', 'cloud-sync'] }] },
)
export type UpdatePolicyBody = Static<typeof UpdatePolicyBodySchema>

export const ListPoliciesQuerySchema = Type.Object(
  { ...listQueryProperties, productId: Type.Optional(ProductIdSchema) },
  { additionalProperties: false },
)
export type ListPoliciesQuery = Static<typeof ListPoliciesQuerySchema>

export const PolicyListSchema = PaginatedSchema(PolicyResourceSchema)

export const policySortFields = ['createdAt', 'updatedAt', 'name'] as const
export const policyFilterFields = ['productId', 'createdAt', 'updatedAt'] as const

export const RenewLicenseBodySchema = Type.Object(
  {
    duration: Type.Optional(
      Type.Integer({
        minimum: minDurationSeconds,
        maximum: maxDurationSeconds,
        description:
          "Seconds to add; defaults to the license's policy duration (required when it has none). The new expiration date is max(now, current expiration date) + duration.",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ duration: 31_536_000 }] },
)
export type RenewLicenseBody = Static<typeof RenewLicenseBodySchema>
