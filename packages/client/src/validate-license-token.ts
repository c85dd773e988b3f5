/**
 * @module Offline validation of license tokens: signature (EdDSA only), `typ`, `kid`, audience
 * (the product), issuer and lifetime, with no network. Runs in Node, browsers, Deno and Bun.
 */
import { LicenseTokenClaimsSchema, licenseTokenIssuer, licenseTokenType } from '@keyturn/protocol'
import {
  base64url,
  calculateJwkThumbprint,
  decodeProtectedHeader,
  errors,
  exportJWK,
  importJWK,
  importSPKI,
  type JWK,
  jwtVerify,
} from 'jose'
import { Check } from 'typebox/value'
import { LicenseTokenError } from './errors.js'

/** A product public key: PEM (SPKI) text, or a JWK as the API returns in `publicKeyJwk`. */
export type PublicKeyInput = string | JWK

export interface ValidateLicenseTokenOptions {
  /** The product the token must be for (its `aud`). */
  readonly productId: string
  /** The product's public key, or several (current and retired, to accept tokens from before a rotation). */
  readonly publicKey: PublicKeyInput | readonly PublicKeyInput[]
  readonly token: string
  /** The time to judge expiry at; defaults to the current time. */
  readonly now?: Date
  /** Accepted clock skew for `exp` and `nbf`, in seconds (default 0). */
  readonly clockToleranceSeconds?: number
  /**
   * This machine's fingerprint: when given, the token must be bound to it (issued with the same
   * `fingerprint`), else the validation fails with `fingerprint_mismatch`.
   */
  readonly fingerprint?: string
}

/** The spec's offline validation result (§2), with the custom fields and the issue time. */
export interface OfflineValidationResult {
  readonly licenseId: string
  /** When the token expires (ISO 8601). */
  readonly expiresAt: string
  readonly productId: string
  readonly customFields: Readonly<Record<string, unknown>>
  /** When the token was issued (ISO 8601). */
  readonly issuedAt: string
  /** The machine the token is bound to, when it is. */
  readonly fingerprint?: string
}

/** Longer tokens are refused unparsed: a real one is well under this even with a 4 KiB custom payload. */
export const maxLicenseTokenLength = 16 * 1024

/**
 * Validates a license token offline; rejects with a `LicenseTokenError` whose `code` says why.
 *
 * @example
 * ```ts
 * import { validateLicenseToken } from '@keyturn/client'
 *
 * const result = await validateLicenseToken({ productId: 'prd_…', publicKey: PRODUCT_PUBLIC_KEY_PEM, token })
 * console.log(result.licenseId, result.expiresAt)
 * ```
 */
export async function validateLicenseToken(
  options: ValidateLicenseTokenOptions,
): Promise<OfflineValidationResult> {
  const { token, productId } = options
  if (typeof token !== 'string' || token.length === 0 || token.length > maxLicenseTokenLength) {
    throw new LicenseTokenError(
      'malformed',
      `A license token is a JWT of at most ${maxLicenseTokenLength} characters.`,
    )
  }
  const header = readHeader(token)
  // Never let the token choose its algorithm (RFC 8725): `none`, HS256 and the rest stop here.
  if (header.alg !== 'EdDSA') {
    throw new LicenseTokenError(
      'unsupported_algorithm',
      `Only EdDSA tokens are accepted, not ${String(header.alg)}.`,
    )
  }
  if (header.typ !== licenseTokenType) {
    throw new LicenseTokenError('malformed', `The token type must be ${licenseTokenType}.`)
  }
  checkEncoding(token)
  const key = await keyFor(options.publicKey, header.kid)
  const { payload: claims } = await jwtVerify(token, key, {
    algorithms: ['EdDSA'],
    typ: licenseTokenType,
    audience: productId,
    issuer: licenseTokenIssuer,
    requiredClaims: ['exp', 'iat', 'sub', 'jti'],
    ...(options.now === undefined ? {} : { currentDate: options.now }),
    ...(options.clockToleranceSeconds === undefined ? {} : { clockTolerance: options.clockToleranceSeconds }),
  }).catch((error: unknown) => {
    throw toLicenseTokenError(error)
  })
  if (
    !Check(LicenseTokenClaimsSchema, claims) ||
    claims.productId !== productId ||
    claims.sub !== claims.licenseId
  ) {
    throw new LicenseTokenError('malformed', 'The token does not carry license claims.')
  }
  if (options.fingerprint !== undefined && claims.fingerprint !== options.fingerprint) {
    throw new LicenseTokenError('fingerprint_mismatch', 'The token is bound to another machine, or to none.')
  }
  const { licenseId, expirationDate, customFields = {}, createdAt, fingerprint } = claims
  return {
    licenseId,
    expiresAt: expirationDate,
    productId: claims.productId,
    customFields,
    issuedAt: createdAt,
    ...(fingerprint === undefined ? {} : { fingerprint }),
  }
}

const ed25519SignatureBytes = 64

function readHeader(token: string): ReturnType<typeof decodeProtectedHeader> {
  if (token.split('.').length !== 3) {
    throw new LicenseTokenError('malformed', 'A license token has three dot-separated parts.')
  }
  try {
    return decodeProtectedHeader(token)
  } catch (error) {
    throw new LicenseTokenError('malformed', 'The token header is not valid base64url JSON.', {
      cause: error,
    })
  }
}

/**
 * Only canonical base64url: decoders ignore stray trailing bits, which would let many spellings of
 * one token pass. An Ed25519 signature is exactly 64 bytes.
 */
function checkEncoding(token: string): void {
  const decoded = token.split('.').map(decodeCanonical)
  if (decoded.some((part) => part === undefined) || decoded[2]?.length !== ed25519SignatureBytes) {
    throw new LicenseTokenError(
      'malformed',
      'The token is not three canonical base64url parts with an Ed25519 signature.',
    )
  }
}

function decodeCanonical(part: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) {
    return undefined
  }
  try {
    const bytes = base64url.decode(part)
    return base64url.encode(bytes) === part ? bytes : undefined
  } catch {
    return undefined
  }
}

/** jose's error classes → our codes. */
function toLicenseTokenError(error: unknown): LicenseTokenError {
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return new LicenseTokenError(
      'unsupported_algorithm',
      'The token uses an algorithm that is not accepted.',
      { cause: error },
    )
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new LicenseTokenError(
      'invalid_signature',
      'The token signature does not verify with the product key.',
      {
        cause: error,
      },
    )
  }
  if (error instanceof errors.JWTExpired) {
    return new LicenseTokenError('expired', 'The token has expired.', { cause: error })
  }
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') {
    return new LicenseTokenError('product_mismatch', 'The token is for another product.', { cause: error })
  }
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'nbf') {
    return new LicenseTokenError('not_yet_valid', 'The token is not valid yet; check the clock.', {
      cause: error,
    })
  }
  return new LicenseTokenError('malformed', 'The token is not a valid license token.', { cause: error })
}

interface ImportedKey {
  readonly kid: string
  readonly key: CryptoKey
}

// Importing a key costs more than verifying a signature: keep the last few imports.
const importedKeys = new Map<string, Promise<ImportedKey>>()
const maxImportedKeys = 32

async function keyFor(
  publicKey: ValidateLicenseTokenOptions['publicKey'],
  kid: string | undefined,
): Promise<CryptoKey> {
  const inputs = isKeyList(publicKey) ? publicKey : [publicKey]
  if (inputs.length === 0) {
    throw new TypeError('validateLicenseToken needs at least one public key')
  }
  const keys = await Promise.all(inputs.map(importOnce))
  const match = keys.find((candidate) => candidate.kid === kid)
  if (match === undefined) {
    throw new LicenseTokenError(
      'invalid_signature',
      `No configured public key has the token's key id (${String(kid)}).`,
    )
  }
  return match.key
}

// Array.isArray does not narrow readonly arrays.
function isKeyList(value: ValidateLicenseTokenOptions['publicKey']): value is readonly PublicKeyInput[] {
  return Array.isArray(value)
}

function importOnce(input: PublicKeyInput): Promise<ImportedKey> {
  const cacheKey = typeof input === 'string' ? input : JSON.stringify(input)
  let imported = importedKeys.get(cacheKey)
  if (imported === undefined) {
    imported = importKey(input)
    imported.catch(() => importedKeys.delete(cacheKey))
    if (importedKeys.size >= maxImportedKeys) {
      importedKeys.clear()
    }
    importedKeys.set(cacheKey, imported)
  }
  return imported
}

async function importKey(input: PublicKeyInput): Promise<ImportedKey> {
  try {
    if (typeof input === 'string') {
      const key = await importSPKI(input, 'EdDSA', { extractable: true })
      return { kid: await calculateJwkThumbprint(await exportJWK(key), 'sha256'), key }
    }
    const key = await importJWK({ ...input, alg: 'EdDSA' }, 'EdDSA')
    if (!(key instanceof CryptoKey)) {
      throw new TypeError('a symmetric JWK is not a public key')
    }
    return { kid: input.kid ?? (await calculateJwkThumbprint(input, 'sha256')), key }
  } catch (error) {
    throw new TypeError('publicKey must be an Ed25519 public key as PEM (SPKI) or JWK', { cause: error })
  }
}
