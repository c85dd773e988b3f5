/**
 * @module The license-file format (docs/guides/offline.md, "The file format"): an armoured text
 * holding a clear header, a payload (JSON, optionally AES-256-GCM encrypted) and an Ed25519
 * signature over both. Declared once here; the server writes it, `@keyturn/client` reads it.
 */
import { type Static, Type } from 'typebox'

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
