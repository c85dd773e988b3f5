import { type Static, Type } from 'typebox'
import {
  listQueryProperties,
  maxTokenTtlSeconds,
  minTokenTtlSeconds,
  PaginatedSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { exampleKeyId, examplePublicKey, examplePublicKeyJwk } from './examples.js'
import { MetadataInputSchema, MetadataSchema } from './metadata.js'

export const ProductStatusSchema = Type.Enum(['active', 'suspended'])
export type ProductStatus = Static<typeof ProductStatusSchema>

export const ProductNameSchema = Type.String({
  minLength: 1,
  maxLength: 200,
  examples: ['Acme Photo Editor'],
})

/** Longest token a client key obtains when the product sets no `clientTokenTtl` (seconds): 7 days. */
export const defaultClientTokenTtlSeconds = 7 * 24 * 60 * 60

export const ClientTokenTtlSchema = Type.Integer({
  minimum: minTokenTtlSeconds,
  maximum: maxTokenTtlSeconds,
  description: `Longest lifetime, in seconds, of a token obtained with a client key (\`POST /licenses/tokens\`); a longer \`ttl\` is shortened to it. Default ${defaultClientTokenTtlSeconds} (7 days). A client key can be extracted from a shipped application, so its tokens should be short-lived; management keys are not limited by it.`,
  examples: [defaultClientTokenTtlSeconds],
})

export const SignResponsesSchema = Type.Boolean({
  description:
    'When true, the application-facing answers for this product (validate, activate, tokens by key, …) always carry an RFC 9421 signature, even when the request does not send `Keyturn-Sign: ed25519`.',
  examples: [false],
})

const BrandingUrlSchema = Type.Union([
  Type.String({ maxLength: 2000, pattern: '^https?://[^\\s<>"]+$', format: 'uri' }),
  Type.Null(),
])

/**
 * How the product shows itself to its customers, in mails and the customer portal. Every field is
 * null when unset: mails then use the product's `name` and leave the rest out.
 */
export const ProductBrandingSchema = Type.Object(
  {
    displayName: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
      description: "The name customers see; null: the product's `name`.",
    }),
    logoUrl: BrandingUrlSchema,
    accentColor: Type.Union([Type.String({ pattern: '^#[0-9a-fA-F]{6}$' }), Type.Null()], {
      description: 'A colour as `#rrggbb`, for links and buttons.',
    }),
    supportEmail: Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Null()]),
    supportUrl: BrandingUrlSchema,
    portalUrl: Type.Union(
      [Type.String({ maxLength: 2000, pattern: '^https?://[^\\s<>"]+$', format: 'uri' }), Type.Null()],
      {
        description:
          "Where customers manage their licenses (the customer portal's address), linked from mails.",
      },
    ),
  },
  { additionalProperties: false },
)
export type ProductBranding = Static<typeof ProductBrandingSchema>

/** In a create or update: the fields given replace the stored ones (null clears one); the others stay. */
export const ProductBrandingInputSchema = Type.Partial(ProductBrandingSchema, { additionalProperties: false })

export const noBranding: ProductBranding = {
  displayName: null,
  logoUrl: null,
  accentColor: null,
  supportEmail: null,
  supportUrl: null,
  portalUrl: null,
}

/** A public key as a JSON Web Key (RFC 8037 OKP, Ed25519). */
export const PublicKeyJwkSchema = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String(),
    kid: Type.String(),
    alg: Type.Literal('EdDSA'),
    use: Type.Literal('sig'),
  },
  { additionalProperties: false },
)
export type PublicKeyJwk = Static<typeof PublicKeyJwkSchema>

export const ProductResourceSchema = Type.Object(
  {
    id: ProductIdSchema,
    object: Type.Literal('Product'),
    name: ProductNameSchema,
    status: ProductStatusSchema,
    clientTokenTtl: ClientTokenTtlSchema,
    signResponses: SignResponsesSchema,
    branding: ProductBrandingSchema,
    publicKey: Type.String({ description: 'Current Ed25519 public key, PEM (SPKI).' }),
    publicKeyJwk: PublicKeyJwkSchema,
    keyId: Type.String({
      description: 'Id of the current signing key (its RFC 7638 JWK thumbprint); the `kid` of tokens.',
    }),
    metadata: MetadataSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
        object: 'Product',
        name: 'Acme Photo Editor',
        status: 'active',
        clientTokenTtl: defaultClientTokenTtlSeconds,
        signResponses: false,
        branding: noBranding,
        publicKey: examplePublicKey,
        publicKeyJwk: examplePublicKeyJwk,
        keyId: exampleKeyId,
        metadata: {},
        createdAt: '2030-01-01T00:00:00.000Z',
        updatedAt: '2030-01-01T00:00:00.000Z',
      },
    ],
  },
)
export type ProductResource = Static<typeof ProductResourceSchema>

export const CreateProductBodySchema = Type.Object(
  {
    name: ProductNameSchema,
    clientTokenTtl: Type.Optional(ClientTokenTtlSchema),
    signResponses: Type.Optional(SignResponsesSchema),
    branding: Type.Optional(ProductBrandingInputSchema),
    metadata: Type.Optional(MetadataInputSchema),
  },
  { additionalProperties: false, examples: [{ name: 'Acme Photo Editor' }] },
)
export type CreateProductBody = Static<typeof CreateProductBodySchema>

export const UpdateProductBodySchema = Type.Object(
  {
    name: Type.Optional(ProductNameSchema),
    clientTokenTtl: Type.Optional(ClientTokenTtlSchema),
    signResponses: Type.Optional(SignResponsesSchema),
    branding: Type.Optional(ProductBrandingInputSchema),
    metadata: Type.Optional(MetadataInputSchema),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Acme Photo Editor Pro' }, { clientTokenTtl: 86400 }, { signResponses: true }],
  },
)
export type UpdateProductBody = Static<typeof UpdateProductBodySchema>

export const ListProductsQuerySchema = Type.Object(
  { ...listQueryProperties },
  { additionalProperties: false },
)
export type ListProductsQuery = Static<typeof ListProductsQuerySchema>

export const ProductListSchema = PaginatedSchema(ProductResourceSchema)

export const productSortFields = ['createdAt', 'updatedAt', 'name'] as const
export const productFilterFields = ['status', 'createdAt', 'updatedAt', 'name'] as const
