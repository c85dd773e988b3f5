import { type Static, Type } from 'typebox'
import { CheckInBySchema, CheckInGracePeriodSchema } from './check-in.js'
import {
  CustomerIdSchema,
  LicenseIdSchema,
  listQueryProperties,
  PaginatedSchema,
  PolicyIdSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { EntitlementCodeSchema, EntitlementCodesSchema } from './entitlements.js'
import { exampleLicense, exampleTime } from './examples.js'
import { MetadataInputSchema, MetadataSchema } from './metadata.js'
import { NonceSchema } from './signed-answers.js'

/** Computed at response time: revoked > expired > active (docs/decisions/0001-licenses.md). */
export const LicenseStatusSchema = Type.Enum(['active', 'revoked', 'expired'])
export type LicenseStatus = Static<typeof LicenseStatusSchema>

/** `maxActivations` when a create request does not give one (docs/decisions/0001-licenses.md). */
export const defaultMaxActivations = 1
/** Upper bound on `maxActivations`, so it fits a 32-bit database integer. */
export const maxMaxActivations = 1_000_000

export const MaxActivationsSchema = Type.Union(
  [Type.Integer({ minimum: 1, maximum: maxMaxActivations }), Type.Null()],
  {
    description: 'Maximum number of activations; `null` means unlimited.',
  },
)

/** Bounds of `heartbeatTtl`, in seconds: a minute to a week. */
export const minHeartbeatTtlSeconds = 60
export const maxHeartbeatTtlSeconds = 604_800

export const HeartbeatTtlSchema = Type.Union(
  [Type.Integer({ minimum: minHeartbeatTtlSeconds, maximum: maxHeartbeatTtlSeconds }), Type.Null()],
  {
    description:
      'Floating seats: an activation holds its seat for this many seconds after its last heartbeat, then lapses and frees it. `null`: activations never lapse.',
    examples: [900],
  },
)

/** Upper bound on `maxUses`: far below 2^53, so `uses` stays an exact number everywhere. */
export const maxMaxUses = 1_000_000_000_000

export const MaxUsesSchema = Type.Union([Type.Integer({ minimum: 1, maximum: maxMaxUses }), Type.Null()], {
  description: 'Metered usage: how many uses the license allows until reset. `null`: unmetered.',
  examples: [1000],
})

export const LicenseKeySchema = Type.String({
  minLength: 1,
  maxLength: 256,
  description:
    "The license key: Keyturn's own are 25 Crockford base32 characters in five dash-separated groups (matched in any case, with or without dashes, O read as 0 and I or L as 1); a key of your own, given when the license was created, is matched exactly.",
  examples: ['7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A'],
})

/** A key of the vendor's own, given at creation (keys from another licensing system). */
export const CustomLicenseKeySchema = Type.String({
  minLength: 8,
  maxLength: 256,
  pattern: '^[!-~](?:[ -~]*[!-~])?$',
  description:
    'A key of your own instead of a generated one: 8 to 256 printable ASCII characters, no space at either end. Stored and matched exactly as given, unless it is shaped like a Keyturn key (then it is stored in canonical form). Unique across the server: a taken key is 409 `license_key_taken`.',
  examples: ['ACME-PRO-2024-000183'],
})

/** A license's id in another system (an import's source), unique per product. */
export const ExternalIdSchema = Type.String({
  minLength: 1,
  maxLength: 150,
  pattern: '^[!-~](?:[ -~]*[!-~])?$',
  description:
    "The license's id in the system it came from (an import's source): 1 to 150 printable ASCII characters, no space at either end, unique per product. A second license with the same one is 409 `external_id_taken`; a batch import finds the license by it instead of making another.",
  examples: ['kg-lic-8c1e2f'],
})

export const StatusDetailsSchema = Type.Object(
  {
    isRevoked: Type.Boolean(),
    isExpired: Type.Boolean(),
    determinedAt: TimestampSchema,
  },
  { additionalProperties: false },
)
export type StatusDetails = Static<typeof StatusDetailsSchema>

export const LicenseResourceSchema = Type.Object(
  {
    id: LicenseIdSchema,
    object: Type.Literal('License'),
    key: LicenseKeySchema,
    maxActivations: MaxActivationsSchema,
    status: LicenseStatusSchema,
    expirationDate: Type.Union([TimestampSchema, Type.Null()], { description: '`null`: never expires.' }),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
    productId: ProductIdSchema,
    statusDetails: StatusDetailsSchema,
    activationCount: Type.Integer({
      minimum: 0,
      description:
        'Machines holding a seat now (at most `maxActivations`, unless it was lowered); with a `heartbeatTtl`, only activations whose lease has not lapsed.',
    }),
    heartbeatTtl: HeartbeatTtlSchema,
    maxUses: MaxUsesSchema,
    uses: Type.Integer({ minimum: 0, description: 'Uses counted since creation or the last reset.' }),
    usesResetAt: Type.Union([TimestampSchema, Type.Null()], {
      description: 'When `uses` was last reset to 0; `null`: never.',
    }),
    customerId: Type.Union([CustomerIdSchema, Type.Null()], {
      description: 'The customer who owns it, if any.',
    }),
    policyId: Type.Union([PolicyIdSchema, Type.Null()], {
      description: 'The policy it was made from, if any.',
    }),
    entitlements: Type.Array(EntitlementCodeSchema, {
      description: "Sorted union of the license's own entitlement codes and its policy's, as they are now.",
    }),
    metadata: MetadataSchema,
    externalId: Type.Union([ExternalIdSchema, Type.Null()], {
      description: 'Its id in the system it was imported from, unique per product; `null`: none.',
    }),
  },
  {
    additionalProperties: false,
    examples: [exampleLicense],
  },
)
export type LicenseResource = Static<typeof LicenseResourceSchema>

/** The terms a request may give a license, each optional: on creation and on update alike. */
const licenseTermsInputProperties = {
  maxActivations: Type.Optional(MaxActivationsSchema),
  expirationDate: Type.Optional(
    Type.Union([TimestampSchema, Type.Null()], {
      description: 'Must be in the future; `null`: never expires.',
    }),
  ),
  heartbeatTtl: Type.Optional(HeartbeatTtlSchema),
  maxUses: Type.Optional(MaxUsesSchema),
}

export const CreateLicenseBodySchema = Type.Object(
  {
    productId: ProductIdSchema,
    ...licenseTermsInputProperties,
    policyId: Type.Optional(
      Type.Union([PolicyIdSchema, Type.Null()], {
        description:
          'A policy of the same product, used as a template: its `maxActivations` and expiration apply unless given here.',
      }),
    ),
    customerId: Type.Optional(Type.Union([CustomerIdSchema, Type.Null()], { description: 'Must exist.' })),
    entitlements: Type.Optional(EntitlementCodesSchema),
    metadata: Type.Optional(MetadataInputSchema),
    key: Type.Optional(CustomLicenseKeySchema),
    externalId: Type.Optional(ExternalIdSchema),
  },
  {
    additionalProperties: false,
    examples: [
      {
        productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
        maxActivations: 3,
        expirationDate: '2031-01-01T00:00:00.000Z',
      },
      { productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ', key: 'ACME-PRO-2024-000183' },
    ],
  },
)
export type CreateLicenseBody = Static<typeof CreateLicenseBodySchema>

export const UpdateLicenseBodySchema = Type.Object(
  {
    ...licenseTermsInputProperties,
    customerId: Type.Optional(
      Type.Union([CustomerIdSchema, Type.Null()], {
        description: 'Must exist; `null` detaches the customer.',
      }),
    ),
    entitlements: Type.Optional(EntitlementCodesSchema),
    metadata: Type.Optional(MetadataInputSchema),
    policyId: Type.Optional(
      Type.Union([PolicyIdSchema, Type.Null()], {
        description:
          "Moves the license to this policy of its product (`null`: to none). The fields a policy gives a license (`maxActivations`, `heartbeatTtl`, `maxUses`) take the new policy's values unless this request gives them; the license's own entitlements stay, its policy's become the new policy's. Machines above a lower limit keep working; new activations are refused until the count is under it. Recorded as `license.policy_changed`.",
      }),
    ),
    expiry: Type.Optional(
      Type.Union([Type.Literal('keep'), Type.Literal('reset')], {
        description:
          'With `policyId` only. `keep` (default): the expiration date stays. `reset`: it becomes what a license made from the new policy now would get (its duration from now, from the first activation, or none).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { maxActivations: 5, expirationDate: '2032-01-01T00:00:00.000Z' },
      { policyId: 'pol_8sKd2LqW5nXv3BzTm7YcRf', expiry: 'reset' },
    ],
  },
)
export type UpdateLicenseBody = Static<typeof UpdateLicenseBodySchema>

export const ListLicensesQuerySchema = Type.Object(
  {
    ...listQueryProperties,
    productId: Type.Optional(ProductIdSchema),
    externalId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 150,
        description:
          'Only the license with this externalId (one per product; with `productId`, at most one).',
      }),
    ),
  },
  { additionalProperties: false },
)
export type ListLicensesQuery = Static<typeof ListLicensesQuerySchema>

export const LicenseListSchema = PaginatedSchema(LicenseResourceSchema)

/** Fields a license list may be sorted by (`sort=field:order`). */
export const licenseSortFields = [
  'createdAt',
  'updatedAt',
  'expirationDate',
  'maxActivations',
  'key',
  'status',
] as const
/** Fields a license list may be filtered by (`filter=field:operator:value`). */
export const licenseFilterFields = [
  'status',
  'productId',
  'expirationDate',
  'createdAt',
  'updatedAt',
  'maxActivations',
  'customerId',
  'policyId',
  'metadata.<key>',
] as const

export const ValidateLicenseBodySchema = Type.Object(
  {
    key: LicenseKeySchema,
    productId: ProductIdSchema,
    fingerprint: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'When given, the license is valid only if this machine is activated (else reason `not_activated`).',
      }),
    ),
    nonce: Type.Optional(NonceSchema),
    entitlements: Type.Optional(
      Type.Array(EntitlementCodeSchema, {
        maxItems: 100,
        description:
          'When given, the license is valid only if it has every one of these entitlements (else reason `entitlements_missing`).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ key: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A', productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ' }],
  },
)
export type ValidateLicenseBody = Static<typeof ValidateLicenseBodySchema>

/**
 * Why a known license is not valid; `suspended` means its product is suspended (never a license
 * status); `not_activated` (our extension) answers a validation with a `fingerprint` that holds no
 * seat (also a lapsed floating seat); `entitlements_missing` (our extension) one with `entitlements`
 * the license lacks; `usage_exceeded` a metered license whose `uses` reached `maxUses`;
 * `payment_overdue` (our extension) a license whose subscription payment failed and whose payment
 * grace is over (during the grace it stays valid).
 * Precedence: revoked > expired > suspended > payment_overdue > not_activated > entitlements_missing > usage_exceeded (docs/decisions/0001-licenses.md).
 */
export const ValidationReasonSchema = Type.Enum([
  'expired',
  'revoked',
  'suspended',
  'payment_overdue',
  'not_activated',
  'entitlements_missing',
  'usage_exceeded',
])
export type ValidationReason = Static<typeof ValidationReasonSchema>

export const ValidationResultSchema = Type.Object(
  {
    isValid: Type.Boolean(),
    reason: Type.Union([ValidationReasonSchema, Type.Null()]),
    timestamp: TimestampSchema,
    license: LicenseResourceSchema,
    checkInBy: Type.Optional(CheckInBySchema),
    gracePeriod: Type.Optional(CheckInGracePeriodSchema),
    nonce: Type.Optional(NonceSchema),
  },
  {
    additionalProperties: false,
    description:
      '`checkInBy` and `gracePeriod` appear only on a valid answer for a license whose policy sets `checkInInterval`: `checkInBy` is `timestamp` plus that interval.',
    examples: [
      { isValid: true, reason: null, timestamp: exampleTime, license: exampleLicense },
      {
        isValid: true,
        reason: null,
        timestamp: exampleTime,
        license: exampleLicense,
        checkInBy: '2026-12-07T09:30:00.000Z',
        gracePeriod: 259_200,
      },
      {
        isValid: false,
        reason: 'revoked',
        timestamp: exampleTime,
        license: {
          ...exampleLicense,
          status: 'revoked',
          statusDetails: { ...exampleLicense.statusDetails, isRevoked: true },
        },
      },
    ],
  },
)
export type ValidationResult = Static<typeof ValidationResultSchema>
