import { type Static, Type } from 'typebox'
import {
  LicenseIdSchema,
  listQueryProperties,
  PaginatedSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { LicenseKeySchema } from './licenses.js'
import { NonceSchema } from './signed-answers.js'

export const ActivationIdSchema = Type.TemplateLiteral([Type.Literal('act_'), Type.String()], {
  maxLength: 64,
  examples: ['act_9pLm3xQv7TbN2cRw5KsYdA'],
})
export type ActivationId = Static<typeof ActivationIdSchema>

/** Largest `metadata`, as serialised JSON (bytes). */
export const maxActivationMetadataBytes = 4096

export const FingerprintSchema = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'Identifies the machine, chosen by the application (e.g. a hash of a machine id).',
  examples: ['4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3'],
})

export const ActivationNameSchema = Type.String({ minLength: 1, maxLength: 200, examples: ['Ada’s laptop'] })

export const ActivationMetadataSchema = Type.Record(Type.String({ maxLength: 256 }), Type.Unknown(), {
  description: `Any JSON object up to ${maxActivationMetadataBytes} bytes serialised.`,
  examples: [{ os: 'macOS 15', appVersion: '3.2.1' }],
})

export const ActivationResourceSchema = Type.Object(
  {
    id: ActivationIdSchema,
    object: Type.Literal('Activation'),
    licenseId: LicenseIdSchema,
    productId: ProductIdSchema,
    fingerprint: FingerprintSchema,
    name: Type.Union([ActivationNameSchema, Type.Null()]),
    metadata: Type.Union([ActivationMetadataSchema, Type.Null()]),
    createdAt: TimestampSchema,
    lastSeenAt: TimestampSchema,
    lastHeartbeatAt: {
      ...TimestampSchema,
      description: 'The last heartbeat (activating counts as one).',
    },
    expiresAt: Type.Union([TimestampSchema, Type.Null()], {
      description:
        "When the seat lapses unless a heartbeat comes first: `lastHeartbeatAt` plus the license's `heartbeatTtl`; `null` when the license has none (the activation never lapses).",
    }),
    nonce: Type.Optional(NonceSchema),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'act_9pLm3xQv7TbN2cRw5KsYdA',
        object: 'Activation',
        licenseId: 'lic_7fQx2mNc4RtYp9LkWv3bHs',
        productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
        fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3',
        name: 'Ada’s laptop',
        metadata: { os: 'macOS 15' },
        createdAt: '2030-01-01T00:00:00.000Z',
        lastSeenAt: '2030-01-02T09:30:00.000Z',
        lastHeartbeatAt: '2030-01-02T09:30:00.000Z',
        expiresAt: '2030-01-02T09:45:00.000Z',
      },
    ],
  },
)
export type ActivationResource = Static<typeof ActivationResourceSchema>

export const ActivateLicenseBodySchema = Type.Object(
  {
    fingerprint: FingerprintSchema,
    name: Type.Optional(ActivationNameSchema),
    metadata: Type.Optional(ActivationMetadataSchema),
  },
  {
    additionalProperties: false,
    examples: [{ fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3', name: 'Ada’s laptop' }],
  },
)
export type ActivateLicenseBody = Static<typeof ActivateLicenseBodySchema>

/**
 * What names one machine of one license on the by-key routes (activate, deactivate, heartbeat):
 * the license key, its product and the machine's fingerprint.
 */
const machineByKeyProperties = {
  key: LicenseKeySchema,
  productId: ProductIdSchema,
  fingerprint: FingerprintSchema,
}

const machineByKeyOptions = {
  additionalProperties: false,
  examples: [
    {
      key: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A',
      productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
      fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3',
    },
  ],
} as const

export const ActivateByKeyBodySchema = Type.Object(
  {
    ...machineByKeyProperties,
    name: Type.Optional(ActivationNameSchema),
    metadata: Type.Optional(ActivationMetadataSchema),
    nonce: Type.Optional(NonceSchema),
  },
  machineByKeyOptions,
)
export type ActivateByKeyBody = Static<typeof ActivateByKeyBodySchema>

export const DeactivateByKeyBodySchema = Type.Object(
  { ...machineByKeyProperties, nonce: Type.Optional(NonceSchema) },
  machineByKeyOptions,
)
export type DeactivateByKeyBody = Static<typeof DeactivateByKeyBodySchema>

/** `POST /licenses/heartbeat`: what an application sends to keep its floating seat. */
export const HeartbeatByKeyBodySchema = Type.Object(
  { ...machineByKeyProperties, nonce: Type.Optional(NonceSchema) },
  machineByKeyOptions,
)
export type HeartbeatByKeyBody = Static<typeof HeartbeatByKeyBodySchema>

export const ListActivationsQuerySchema = Type.Object(
  { ...listQueryProperties },
  { additionalProperties: false },
)
export type ListActivationsQuery = Static<typeof ListActivationsQuerySchema>

export const ActivationListSchema = PaginatedSchema(ActivationResourceSchema)

/** `GET /activations`: every license's activations the key may see, optionally of one product or license. */
export const ListAllActivationsQuerySchema = Type.Object(
  {
    ...listQueryProperties,
    productId: Type.Optional(ProductIdSchema),
    licenseId: Type.Optional(LicenseIdSchema),
  },
  { additionalProperties: false },
)
export type ListAllActivationsQuery = Static<typeof ListAllActivationsQuerySchema>

/** Fields an activation list may be sorted by (`sort=field:order`). */
export const activationSortFields = ['createdAt', 'lastSeenAt', 'fingerprint'] as const
/** Fields `GET /activations` may be filtered by (a license's list: all but productId and licenseId). */
export const activationFilterFields = [
  'createdAt',
  'lastSeenAt',
  'fingerprint',
  'productId',
  'licenseId',
] as const
