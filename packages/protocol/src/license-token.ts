import { type Static, Type } from 'typebox'
import { FingerprintSchema } from './activations.js'
import { CheckInBySchema, CheckInGracePeriodSchema } from './check-in.js'
import {
  LicenseIdSchema,
  listQueryProperties,
  maxLongLifetimeSeconds,
  maxTokenTtlSeconds,
  minTokenTtlSeconds,
  PaginatedSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { exampleLicense, exampleProductKey, exampleToken, exampleTokenPayload } from './examples.js'
import { LicenseKeySchema, LicenseResourceSchema } from './licenses.js'
import { PublicKeyJwkSchema } from './products.js'
import { NonceSchema } from './signed-answers.js'

/** The JWS header `typ` of every license token. */
export const licenseTokenType = 'license+jwt'
/** Token lifetime when a request gives no `ttl` (seconds): 30 days. */
export const defaultTokenTtlSeconds = 30 * 24 * 60 * 60
/** Largest `customPayload`, as serialised JSON (bytes). */
export const maxCustomPayloadBytes = 4096

export const CustomPayloadSchema = Type.Record(Type.String({ maxLength: 256 }), Type.Unknown(), {
  description: `Any JSON object up to ${maxCustomPayloadBytes} bytes serialised; returned as \`customFields\`. Only a management (admin or product) key may set it: a client key gets 403 \`forbidden\`, since anyone can extract a client key from a shipped application.`,
  examples: [{ plan: 'pro', seats: 5 }],
})

const tokenOptions = {
  customPayload: Type.Optional(CustomPayloadSchema),
  ttl: Type.Optional(
    Type.Integer({
      minimum: minTokenTtlSeconds,
      maximum: maxLongLifetimeSeconds,
      description: `Token lifetime in seconds (default ${defaultTokenTtlSeconds}, 30 days); the token never outlives the license. At most ${maxTokenTtlSeconds} (a year) unless the license's policy sets a longer \`tokenTtlMax\` (else 400). With a client key, at most the product's \`clientTokenTtl\` (longer is shortened to it).`,
    }),
  ),
  fingerprint: Type.Optional(
    Type.String({
      ...FingerprintSchema,
      description:
        'Binds the token to this machine, which must be activated: it becomes the `fingerprint` claim.',
    }),
  ),
}

export const CreateLicenseTokenBodySchema = Type.Object(tokenOptions, {
  additionalProperties: false,
  examples: [{ customPayload: { plan: 'pro' }, ttl: 604800 }],
})
export type CreateLicenseTokenBody = Static<typeof CreateLicenseTokenBodySchema>

/** For applications with a `client` key: a token for the license whose key they present. */
export const CreateLicenseTokenByKeyBodySchema = Type.Object(
  { key: LicenseKeySchema, productId: ProductIdSchema, ...tokenOptions, nonce: Type.Optional(NonceSchema) },
  {
    additionalProperties: false,
    examples: [
      {
        key: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A',
        productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
        fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3',
      },
    ],
  },
)
export type CreateLicenseTokenByKeyBody = Static<typeof CreateLicenseTokenByKeyBodySchema>

/** The token's payload fields (docs/decisions/0002-license-tokens.md). */
export const LicenseTokenPayloadSchema = Type.Object(
  {
    licenseId: LicenseIdSchema,
    expirationDate: Type.String({ format: 'date-time', description: 'When the token expires.' }),
    productId: ProductIdSchema,
    createdAt: Type.String({ format: 'date-time', description: 'When the token was issued.' }),
    customFields: Type.Optional(CustomPayloadSchema),
    fingerprint: Type.Optional(
      Type.String({ description: 'The machine the token is bound to, when it is.' }),
    ),
    entitlements: Type.Optional(
      Type.Array(Type.String(), {
        description: "The license's entitlement codes when the token was issued, sorted.",
      }),
    ),
    checkInBy: Type.Optional(CheckInBySchema),
    gracePeriod: Type.Optional(CheckInGracePeriodSchema),
  },
  { additionalProperties: false },
)
export type LicenseTokenPayload = Static<typeof LicenseTokenPayloadSchema>

export const LicenseTokenResourceSchema = Type.Object(
  {
    token: Type.String({
      description: 'A JWS compact JWT (EdDSA, typ license+jwt), verifiable with the product public key.',
    }),
    payload: LicenseTokenPayloadSchema,
    license: LicenseResourceSchema,
    nonce: Type.Optional(NonceSchema),
  },
  {
    additionalProperties: false,
    examples: [{ token: exampleToken, payload: exampleTokenPayload, license: exampleLicense }],
  },
)
export type LicenseTokenResource = Static<typeof LicenseTokenResourceSchema>

/**
 * The JWT claims of a license token: the payload fields plus the registered claims. Only ever gains
 * optional claims: issued tokens live out their lifetime.
 */
export const LicenseTokenClaimsSchema = Type.Object({
  licenseId: LicenseIdSchema,
  productId: ProductIdSchema,
  expirationDate: TimestampSchema,
  createdAt: TimestampSchema,
  customFields: Type.Optional(CustomPayloadSchema),
  fingerprint: Type.Optional(Type.String()),
  entitlements: Type.Optional(Type.Array(Type.String())),
  checkInBy: Type.Optional(TimestampSchema),
  gracePeriod: Type.Optional(Type.Integer({ minimum: 0 })),
  iss: Type.String(),
  sub: LicenseIdSchema,
  aud: ProductIdSchema,
  iat: Type.Integer(),
  nbf: Type.Optional(Type.Integer()),
  exp: Type.Integer(),
  jti: Type.String(),
})
export type LicenseTokenClaims = Static<typeof LicenseTokenClaimsSchema>

/** The issuer claim of every Keyturn token. */
export const licenseTokenIssuer = 'keyturn'

/** A product's public signing key, current or retired (tokens signed before a rotation still verify). */
export const ProductKeyResourceSchema = Type.Object(
  {
    object: Type.Literal('ProductKey'),
    keyId: Type.String(),
    productId: ProductIdSchema,
    publicKey: Type.String({ description: 'Ed25519 public key, PEM (SPKI).' }),
    publicKeyJwk: PublicKeyJwkSchema,
    isCurrent: Type.Boolean(),
    createdAt: TimestampSchema,
    retiredAt: Type.Union([TimestampSchema, Type.Null()]),
  },
  {
    additionalProperties: false,
    examples: [exampleProductKey],
  },
)
export type ProductKeyResource = Static<typeof ProductKeyResourceSchema>

export const ProductKeyListSchema = PaginatedSchema(ProductKeyResourceSchema)

export const ListProductKeysQuerySchema = Type.Object(
  { page: listQueryProperties.page, limit: listQueryProperties.limit },
  { additionalProperties: false },
)
export type ListProductKeysQuery = Static<typeof ListProductKeysQuerySchema>
