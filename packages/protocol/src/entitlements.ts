import { type Static, Type } from 'typebox'
import {
  EntitlementIdSchema,
  listQueryProperties,
  PaginatedSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { exampleEntitlement } from './examples.js'

/** Most codes one license or policy may list. */
export const maxEntitlementCodes = 100

export const EntitlementCodeSchema = Type.String({
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description: 'Unique per product: `[a-z0-9][a-z0-9._-]{0,63}`.',
  examples: ['export-pdf'],
})
export const EntitlementNameSchema = Type.String({
  minLength: 1,
  maxLength: 200,
  examples: ['Export to PDF'],
})

/** A set of entitlement codes in a request: replaces the set; unknown codes are a 400 naming them. */
export const EntitlementCodesSchema = Type.Array(EntitlementCodeSchema, {
  maxItems: maxEntitlementCodes,
  uniqueItems: true,
  description: 'Entitlement codes of the same product; the list replaces the current set.',
  examples: [['export-pdf', 'cloud-sync']],
})

export const EntitlementResourceSchema = Type.Object(
  {
    id: EntitlementIdSchema,
    object: Type.Literal('Entitlement'),
    productId: ProductIdSchema,
    code: EntitlementCodeSchema,
    name: EntitlementNameSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
  { additionalProperties: false, examples: [exampleEntitlement] },
)
export type EntitlementResource = Static<typeof EntitlementResourceSchema>

export const CreateEntitlementBodySchema = Type.Object(
  { productId: ProductIdSchema, code: EntitlementCodeSchema, name: EntitlementNameSchema },
  {
    additionalProperties: false,
    examples: [{ productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ', code: 'export-pdf', name: 'Export to PDF' }],
  },
)
export type CreateEntitlementBody = Static<typeof CreateEntitlementBodySchema>

export const UpdateEntitlementBodySchema = Type.Object(
  { code: Type.Optional(EntitlementCodeSchema), name: Type.Optional(EntitlementNameSchema) },
  { additionalProperties: false, examples: [{ name: 'Export to PDF and PNG' }] },
)
export type UpdateEntitlementBody = Static<typeof UpdateEntitlementBodySchema>

export const ListEntitlementsQuerySchema = Type.Object(
  { ...listQueryProperties, productId: Type.Optional(ProductIdSchema) },
  { additionalProperties: false },
)
export type ListEntitlementsQuery = Static<typeof ListEntitlementsQuerySchema>

export const EntitlementListSchema = PaginatedSchema(EntitlementResourceSchema)

export const entitlementSortFields = ['createdAt', 'code', 'name'] as const
export const entitlementFilterFields = ['code', 'productId', 'createdAt'] as const
