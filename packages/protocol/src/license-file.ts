/**
 * @module The license-file format (docs/guides/offline.md, "The file format"): an armoured text
 * holding a clear header, a payload (JSON, optionally AES-256-GCM encrypted) and an Ed25519
 * signature over both. Declared once here; the server writes it, `@keyturn/client` reads it.
 */
import { type Static, Type } from 'typebox'
import { FingerprintSchema } from './activations.js'
import { CheckInBySchema, CheckInGracePeriodSchema } from './check-in.js'
import { minTokenTtlSeconds, ProductIdSchema, TimestampSchema } from './common.js'
import { exampleLicense } from './examples.js'
import { LicenseKeySchema, LicenseResourceSchema } from './licenses.js'

/** The first line of every license file. */
export const licenseFileBegin = '-----BEGIN KEYTURN LICENSE FILE-----'
/** The last line of every license file. */
export const licenseFileEnd = '-----END KEYTURN LICENSE FILE-----'
/** The header's `format`: the version of the layout below. */
export const licenseFileFormat = 'keyturn-license-file/1'
/** The HKDF `info` and the context of every key derived for a license file. */
export const licenseFileKdfInfo = 'keyturn-license-file/1 aes-256-gcm'
/** Characters per line of the armoured body. */
export const licenseFileLineLength = 64
/** Longer files are refused unparsed: a real one is a few KiB even with metadata. */
export const maxLicenseFileLength = 64 * 1024
/** PBKDF2-SHA256 iterations the server uses for custom keys (OWASP's figure for PBKDF2-HMAC-SHA256). */
export const licenseFilePbkdf2Iterations = 600_000
/** Fewer or more iterations in a header are refused: below is too weak, above is a denial of service. */
export const minLicenseFilePbkdf2Iterations = 100_000
export const maxLicenseFilePbkdf2Iterations = 10_000_000

/** How the encryption key is derived: HKDF for Keyturn's own (random, 125-bit) keys, PBKDF2 for custom keys. */
export const LicenseFileKdfSchema = Type.Enum(['HKDF-SHA256', 'PBKDF2-SHA256'])

export const LicenseFileEncryptionSchema = Type.Object(
  {
    alg: Type.Literal('A256GCM'),
    kdf: LicenseFileKdfSchema,
    /** PBKDF2 only. */
    iterations: Type.Optional(Type.Integer()),
    /** base64url of 16 random bytes. */
    salt: Type.String({ minLength: 22, maxLength: 22 }),
    /** base64url of the 12-byte GCM nonce. */
    iv: Type.String({ minLength: 16, maxLength: 16 }),
    /** The key material is the license key plus this machine's fingerprint. */
    machineBound: Type.Boolean(),
  },
  { additionalProperties: false },
)
export type LicenseFileEncryption = Static<typeof LicenseFileEncryptionSchema>

/** The clear header: readable without any key, covered by the signature. */
export const LicenseFileHeaderSchema = Type.Object(
  {
    format: Type.Literal(licenseFileFormat),
    alg: Type.String(),
    /** The product signing key's id (RFC 7638 thumbprint, as in `GET /products/:id/keys`). */
    kid: Type.String({ minLength: 1, maxLength: 128 }),
    productId: Type.String({ minLength: 1, maxLength: 64 }),
    /** `keyturn`: a Keyturn-made key, canonicalised before use; `custom`: used exactly as given. */
    keyFormat: Type.Enum(['keyturn', 'custom']),
    /** When the file was issued (ISO 8601, UTC). */
    issued: Type.String({ maxLength: 32 }),
    /** When the file stops being valid (ISO 8601, UTC); `null`: never. */
    expiry: Type.Union([Type.String({ maxLength: 32 }), Type.Null()]),
    encryption: Type.Optional(LicenseFileEncryptionSchema),
  },
  { additionalProperties: false },
)
export type LicenseFileHeader = Static<typeof LicenseFileHeaderSchema>

/** What a license file says about the license (metadata only when the policy opts in). */
export const LicenseFileLicenseSchema = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 64 }),
    status: Type.String({ maxLength: 32 }),
    /** The license's own expiry (ISO 8601); `null`: never. */
    expirationDate: Type.Union([Type.String({ maxLength: 32 }), Type.Null()]),
    policy: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
    entitlements: Type.Array(Type.String({ maxLength: 256 })),
    maxActivations: Type.Union([Type.Integer(), Type.Null()]),
    maxUses: Type.Union([Type.Integer(), Type.Null()]),
    uses: Type.Integer(),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
)
export type LicenseFileLicense = Static<typeof LicenseFileLicenseSchema>

/** The machine a file is bound to. `secret` (offline activation only) keys its deactivation codes. */
export const LicenseFileMachineSchema = Type.Object(
  {
    activationId: Type.String({ minLength: 1, maxLength: 64 }),
    fingerprint: Type.String({ minLength: 1, maxLength: 256 }),
    secret: Type.Optional(Type.String({ minLength: 43, maxLength: 43 })),
  },
  { additionalProperties: false },
)
export type LicenseFileMachine = Static<typeof LicenseFileMachineSchema>

export const LicenseFilePayloadSchema = Type.Object(
  {
    license: LicenseFileLicenseSchema,
    machine: Type.Optional(LicenseFileMachineSchema),
    /** `issued` plus the policy's check-in interval; absent when no check-in is required. */
    checkInBy: Type.Optional(CheckInBySchema),
    gracePeriod: Type.Optional(CheckInGracePeriodSchema),
  },
  { additionalProperties: false },
)
export type LicenseFilePayload = Static<typeof LicenseFilePayloadSchema>

/**
 * The canonical form of a Keyturn-made license key (`keyFormat: "keyturn"`), as stored: upper case,
 * O read as 0, I and L as 1, in five dash-separated groups of five. Input not shaped like such a
 * key (after removing dashes and spaces) is returned unchanged.
 */
export function canonicalLicenseKey(key: string): string {
  const characters = key.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1')
  if (!/^[0-9A-HJKMNP-TV-Z]{25}$/.test(characters)) {
    return key
  }
  return characters.match(/.{5}/g)?.join('-') ?? key
}

/** A file's lifetime when neither the request nor the policy gives one (seconds): a year. */
export const defaultLicenseFileTtlSeconds = 365 * 24 * 60 * 60
/** The longest lifetime a request may give in seconds (a hundred years); `null` asks for no expiry. */
export const maxLicenseFileTtlSeconds = 100 * 365 * 24 * 60 * 60

const licenseFileOptions = {
  ttl: Type.Optional(
    Type.Union(
      [Type.Integer({ minimum: minTokenTtlSeconds, maximum: maxLicenseFileTtlSeconds }), Type.Null()],
      {
        description: `The file's lifetime in seconds, or \`null\` for a file that never expires (default ${defaultLicenseFileTtlSeconds}, a year). The file never outlives the license. With a client key, at most the product's \`clientTokenTtl\` (longer, or \`null\`, is shortened to it).`,
      },
    ),
  ),
  encrypt: Type.Optional(
    Type.Boolean({
      description:
        'Encrypt the payload (AES-256-GCM) under a key derived from the license key (plus the machine fingerprint for a machine file): the file is then useless without the key, and on another machine. Default false.',
    }),
  ),
}

export const CreateLicenseFileBodySchema = Type.Object(licenseFileOptions, {
  additionalProperties: false,
  examples: [{ ttl: 31536000, encrypt: true }],
})
export type CreateLicenseFileBody = Static<typeof CreateLicenseFileBodySchema>

/** For applications: a file for the license whose key they present, bound to an activated machine when `fingerprint` is given. */
export const CreateLicenseFileByKeyBodySchema = Type.Object(
  {
    key: LicenseKeySchema,
    productId: ProductIdSchema,
    fingerprint: Type.Optional(
      Type.String({
        ...FingerprintSchema,
        description: 'Makes a machine file for this machine, which must be activated.',
      }),
    ),
    ...licenseFileOptions,
  },
  {
    additionalProperties: false,
    examples: [
      {
        key: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A',
        productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
        fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3',
        encrypt: true,
      },
    ],
  },
)
export type CreateLicenseFileByKeyBody = Static<typeof CreateLicenseFileByKeyBodySchema>

export const LicenseFileResourceSchema = Type.Object(
  {
    licenseFile: Type.String({
      description: `The license file: armoured text between \`${licenseFileBegin}\` and \`${licenseFileEnd}\`, verifiable offline with the product public key (\`@keyturn/client\` \`verifyLicenseFile\`).`,
    }),
    expiresAt: Type.Union([TimestampSchema, Type.Null()], {
      description: 'When the file expires; `null`: never.',
    }),
    license: LicenseResourceSchema,
  },
  {
    additionalProperties: false,
    examples: [
      {
        licenseFile: `${licenseFileBegin}\neyJmb3JtYXQiOiJrZXl0dXJuLWxpY2Vuc2UtZmlsZS8xIiwiYWxnIjoiRWREU0Ei…\n${licenseFileEnd}\n`,
        expiresAt: '2031-01-01T00:00:00.000Z',
        license: exampleLicense,
      },
    ],
  },
)
export type LicenseFileResource = Static<typeof LicenseFileResourceSchema>
