import { type Static, Type } from 'typebox'
import {
  ApiKeyIdSchema,
  listQueryProperties,
  PaginatedSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { exampleApiKey } from './examples.js'

/**
 * `admin`: everything; `product`: everything about one product's licenses; `client`: for one product,
 * only validate, activate, deactivate and obtain tokens by license key (safe to embed in applications).
 */
export const ApiKeyRoleSchema = Type.Enum(['admin', 'product', 'client'])
export type ApiKeyRole = Static<typeof ApiKeyRoleSchema>

export const ApiKeyResourceSchema = Type.Object(
  {
    id: ApiKeyIdSchema,
    object: Type.Literal('ApiKey'),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: ApiKeyRoleSchema,
    productId: Type.Union([ProductIdSchema, Type.Null()], {
      description: 'The product a `product` or `client` key is scoped to.',
    }),
    prefix: Type.String({
      description: 'The first characters of the secret, to recognise the key.',
      examples: ['kt_prod_4fGh'],
    }),
    createdAt: TimestampSchema,
  },
  {
    additionalProperties: false,
    examples: [exampleApiKey],
  },
)
export type ApiKeyResource = Static<typeof ApiKeyResourceSchema>

/** Returned once, by the create call: the only time the secret is ever shown. */
export const CreatedApiKeyResourceSchema = Type.Object(
  {
    ...ApiKeyResourceSchema.properties,
    secret: Type.String({ description: 'The bearer secret. Shown only in this response; store it now.' }),
  },
  {
    additionalProperties: false,
    examples: [{ ...exampleApiKey, secret: 'kt_prod_4fGhq9Lm2Xc7Vb3Nz8Kp1Rt6Wy5Ds0Ea' }],
  },
)
export type CreatedApiKeyResource = Static<typeof CreatedApiKeyResourceSchema>

export const CreateApiKeyBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: ApiKeyRoleSchema,
    productId: Type.Optional(ProductIdSchema),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Photo Editor back end', role: 'product', productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ' }],
  },
)
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>

export const ListApiKeysQuerySchema = Type.Object({ ...listQueryProperties }, { additionalProperties: false })
export type ListApiKeysQuery = Static<typeof ListApiKeysQuerySchema>

export const ApiKeyListSchema = PaginatedSchema(ApiKeyResourceSchema)

export const apiKeySortFields = ['createdAt', 'name'] as const
export const apiKeyFilterFields = ['role', 'productId', 'createdAt'] as const
