import { type Static, Type } from 'typebox'
import { ActivationMetadataSchema, ActivationNameSchema, FingerprintSchema } from './activations.js'
import { CustomerIdSchema, PolicyIdSchema, ProductIdSchema, TimestampSchema } from './common.js'
import { CustomerEmailSchema, CustomerNameSchema } from './customers.js'
import { EntitlementCodesSchema } from './entitlements.js'
import { ErrorCodeSchema, FieldErrorSchema } from './errors.js'
import { exampleLicenseId, exampleProductId } from './examples.js'
import {
  CustomLicenseKeySchema,
  ExternalIdSchema,
  HeartbeatTtlSchema,
  MaxActivationsSchema,
  MaxUsesSchema,
} from './licenses.js'
import { MetadataInputSchema } from './metadata.js'

/** Rows one `POST /licenses/import` takes at most; a larger import is sent in batches. */
export const maxImportRows = 1000
/** Machines one imported license brings at most. */
export const maxImportActivations = 1000

/** A machine that holds a seat of the license in the system it comes from. */
export const ImportActivationSchema = Type.Object(
  {
    fingerprint: FingerprintSchema,
    name: Type.Optional(ActivationNameSchema),
    metadata: Type.Optional(ActivationMetadataSchema),
    lastSeenAt: Type.Optional(
      Type.Union([TimestampSchema, Type.Null()], {
        description:
          "When the machine was last heard from (its last heartbeat or check). It is the activation's `lastSeenAt`, and a license with a `heartbeatTtl` starts the machine's lease from it: a machine last seen longer ago than the TTL holds no seat until it sends a heartbeat again (then it activates anew). Absent or null: the time of the import.",
      }),
    ),
  },
  { additionalProperties: false },
)
export type ImportActivation = Static<typeof ImportActivationSchema>

export const ImportLicenseRowSchema = Type.Object(
  {
    productId: ProductIdSchema,
    externalId: Type.Optional(ExternalIdSchema),
    key: Type.Optional(CustomLicenseKeySchema),
    policyId: Type.Optional(Type.Union([PolicyIdSchema, Type.Null()])),
    status: Type.Optional(
      Type.Union(
        [Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked'), Type.Literal('suspended')],
        {
          description:
            '`revoked` stays revoked. `suspended` (a license-level suspension elsewhere; Keyturn has none) is imported revoked with `metadata.importedStatus: "suspended"`: reinstating it resumes it. `active` and `expired` are what `expirationDate` makes them (`expired` needs a date that has passed).',
        },
      ),
    ),
    expirationDate: Type.Optional(
      Type.Union([TimestampSchema, Type.Null()], {
        description: 'May lie in the past (an expired license stays expired); `null`: never expires.',
      }),
    ),
    maxActivations: Type.Optional(MaxActivationsSchema),
    heartbeatTtl: Type.Optional(HeartbeatTtlSchema),
    maxUses: Type.Optional(MaxUsesSchema),
    uses: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 1_000_000_000_000,
        description: 'Uses counted so far (default 0).',
      }),
    ),
    customerId: Type.Optional(Type.Union([CustomerIdSchema, Type.Null()], { description: 'Must exist.' })),
    customerEmail: Type.Optional(
      Type.Union([CustomerEmailSchema, Type.Null()], {
        description:
          'The customer with this email (any case), created when there is none; wins over `customerId`.',
      }),
    ),
    customerName: Type.Optional(
      Type.Union([CustomerNameSchema, Type.Null()], {
        description: 'The name of a customer the row creates (an existing customer keeps theirs).',
      }),
    ),
    entitlements: Type.Optional(EntitlementCodesSchema),
    metadata: Type.Optional(MetadataInputSchema),
    activations: Type.Optional(Type.Array(ImportActivationSchema, { maxItems: maxImportActivations })),
  },
  { additionalProperties: false },
)
export type ImportLicenseRow = Static<typeof ImportLicenseRowSchema>

export const ImportLicensesBodySchema = Type.Object(
  {
    licenses: Type.Array(ImportLicenseRowSchema, { minItems: 1, maxItems: maxImportRows }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        licenses: [
          {
            productId: exampleProductId,
            externalId: 'kg-lic-8c1e2f',
            key: 'ACME-PRO-2024-000183',
            status: 'active',
            expirationDate: '2031-01-01T00:00:00.000Z',
            maxActivations: 3,
            customerEmail: 'ada@example.com',
            activations: [
              {
                fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3',
                name: 'Ada’s laptop',
                lastSeenAt: '2026-11-20T09:12:00.000Z',
              },
            ],
          },
        ],
      },
    ],
  },
)
export type ImportLicensesBody = Static<typeof ImportLicensesBodySchema>

export const ImportRowProblemSchema = Type.Object(
  {
    code: ErrorCodeSchema,
    detail: Type.String(),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { additionalProperties: false, description: 'Why the row was not imported (nothing of it was written).' },
)
export type ImportRowProblem = Static<typeof ImportRowProblemSchema>

export const ImportRowResultSchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: "The row's position in `licenses`, from 0." }),
    status: Type.Union([Type.Literal('created'), Type.Literal('unchanged'), Type.Literal('error')], {
      description:
        '`created`: the license was made. `unchanged`: a license with its `externalId` (or, without one, its key) already existed in the product and was left as it is. `error`: nothing of the row was written (`problem` says why).',
    }),
    licenseId: Type.Optional(Type.String({ examples: [exampleLicenseId] })),
    key: Type.Optional(
      Type.String({ description: "The license's key (the row's, or the one made for it)." }),
    ),
    problem: Type.Optional(ImportRowProblemSchema),
  },
  { additionalProperties: false },
)
export type ImportRowResult = Static<typeof ImportRowResultSchema>

export const ImportLicensesResultSchema = Type.Object(
  {
    summary: Type.Object(
      {
        rows: Type.Integer({ minimum: 0 }),
        created: Type.Integer({ minimum: 0 }),
        unchanged: Type.Integer({ minimum: 0 }),
        errors: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    results: Type.Array(ImportRowResultSchema),
  },
  {
    additionalProperties: false,
    examples: [
      {
        summary: { rows: 2, created: 1, unchanged: 0, errors: 1 },
        results: [
          { index: 0, status: 'created', licenseId: exampleLicenseId, key: 'ACME-PRO-2024-000183' },
          {
            index: 1,
            status: 'error',
            problem: {
              code: 'license_key_taken',
              detail: 'Another license already has this key; nothing was created.',
              errors: [{ pointer: '#/licenses/1/key', detail: 'Taken.' }],
            },
          },
        ],
      },
    ],
  },
)
export type ImportLicensesResult = Static<typeof ImportLicensesResultSchema>
