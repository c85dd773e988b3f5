/**
 * @module Offline validation of license tokens: signature (EdDSA only), `typ`, `kid`, audience
 * (the product), issuer and lifetime, with no network. Runs in Node, browsers, Deno and Bun.
 */

import { base64url, calculateJwkThumbprint, exportJWK, importJWK, importSPKI, type JWK } from 'jose'
import { Compile } from 'typebox/compile'
import { LicenseTokenClaimsSchema, licenseTokenIssuer, licenseTokenType } from '../../protocol/src/index.js'
import { readClockTolerance, readNow } from './clock.js'
import { LicenseTokenError } from './errors.js'

/** A product public key: PEM (SPKI) text, or a JWK as the API returns in `publicKeyJwk`. */
export type PublicKeyInput = string | JWK

export interface ValidateLicenseTokenOptions {
  /** The product the token must be for (its `aud`). */
  readonly productId: string
  /** The product's public key, or several (current and retired, to accept tokens from before a rotation). */
  readonly publicKey: PublicKeyInput | readonly PublicKeyInput[]
  readonly token: string
  /**
   * The time to judge expiry at; defaults to the current time. An Invalid Date is refused with an
   * `InvalidOptionError`.
   */
  readonly now?: Date
  /**
   * Accepted clock skew for `exp` and `nbf`, in seconds (default 0, at most 3600). Anything else
   * (NaN, Infinity, negative) is refused with an `InvalidOptionError`, never read as "no limit".
   */
  readonly clockToleranceSeconds?: number
  /**
   * This machine's fingerprint: when given, the token must be bound to it (issued with the same
   * `fingerprint`), else the validation fails with `fingerprint_mismatch`.
   */
  readonly fingerprint?: string
  /**
   * Entitlement codes the license must carry: when the token lacks any of them, the validation fails
   * with `entitlements_missing` (after the signature, lifetime and product checks pass).
   */
  readonly requireEntitlements?: readonly string[]
}

/** The offline validation result (docs/decisions/0002-license-tokens.md), with the custom fields and the issue time. */
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
  /** The license's entitlement codes when the token was issued (empty for tokens from before entitlements). */
  readonly entitlements: readonly string[]
  /** When the application must next validate online (ISO 8601); absent: no check-in required. */
  readonly checkInBy?: string
  /** Seconds of grace after `checkInBy` the license's policy allows; absent when it sets none. */
  readonly gracePeriod?: number
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
  // The clock options first: an invalid one must never widen what is accepted.
  const clock = {
    now: Math.floor(readNow(options.now) / 1000),
    tolerance: readClockTolerance(options.clockToleranceSeconds),
  }
  if (typeof token !== 'string' || token.length === 0 || token.length > maxLicenseTokenLength) {
    throw new LicenseTokenError(
      'malformed',
      `A license token is a JWT of at most ${maxLicenseTokenLength} characters.`,
    )
  }
  const claims = await verifyCompactJws(token, options, clock)
  if (!claimsValidator().Check(claims) || claims.productId !== productId || claims.sub !== claims.licenseId) {
    throw new LicenseTokenError('malformed', 'The token does not carry license claims.')
  }
  if (options.fingerprint !== undefined && claims.fingerprint !== options.fingerprint) {
    throw new LicenseTokenError('fingerprint_mismatch', 'The token is bound to another machine, or to none.')
  }
  const { licenseId, expirationDate, customFields = {}, createdAt, fingerprint, entitlements = [] } = claims
  const missing = (options.requireEntitlements ?? []).filter((code) => !entitlements.includes(code))
  if (missing.length > 0) {
    throw new LicenseTokenError(
      'entitlements_missing',
      `The license does not carry the entitlement${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
    )
  }
  return {
    licenseId,
    expiresAt: expirationDate,
    productId: claims.productId,
    customFields,
    issuedAt: createdAt,
    ...(fingerprint === undefined ? {} : { fingerprint }),
    entitlements,
    ...(claims.checkInBy === undefined ? {} : { checkInBy: claims.checkInBy }),
    ...(claims.gracePeriod === undefined ? {} : { gracePeriod: claims.gracePeriod }),
  }
}

const compileClaims = () => Compile(LicenseTokenClaimsSchema)
let compiledClaims: ReturnType<typeof compileClaims> | undefined
/**
 * The claims' schema compiled on first use: a tenth of a validation when checked by TypeBox's
 * interpreter (`Value.Check`). Where code generation is not allowed (a strict CSP), TypeBox's
 * validator interprets instead, with the same answers.
 */
function claimsValidator(): ReturnType<typeof compileClaims> {
  compiledClaims ??= compileClaims()
  return compiledClaims
}

const ed25519SignatureBytes = 64
const textEncoder = new TextEncoder()
const textDecoder = new TextDecoder()

type JsonObject = Record<string, unknown>

/** The time to judge at (seconds since the epoch) and the tolerance, both already checked. */
interface Clock {
  readonly now: number
  readonly tolerance: number
}

/**
 * The fast path of `validateLicenseToken`, in this one place: the compact JWS is split
 * once, its header checked (alg, typ, crit, kid) before any signature work, every part checked to be
 * canonical base64url and decoded once, the signature verified with WebCrypto's Ed25519 directly
 * against a CryptoKey imported once per key (`importOnce`), then the JWT rules jose's `jwtVerify`
 * applied (iss, aud, required claims, iat, nbf, exp with the clock tolerance) checked here, in jose's
 * order and with the codes its errors mapped to. It saves decoding the token three times and jose's
 * per-call key and option checks (the figures: docs/performance.md).
 * Returns the verified payload; the caller checks it against LicenseTokenClaimsSchema.
 */
async function verifyCompactJws(
  token: string,
  options: ValidateLicenseTokenOptions,
  clock: Clock,
): Promise<unknown> {
  const parts = token.split('.')
  if (parts.length !== 3) {
    throw new LicenseTokenError('malformed', 'A license token has three dot-separated parts.')
  }
  const [encodedHeader = '', encodedPayload = '', encodedSignature = ''] = parts
  const header = readHeader(encodedHeader)
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
  checkCritical(header.crit)
  const payloadBytes = decodeCanonical(encodedPayload)
  const signature = decodeCanonical(encodedSignature)
  if (
    decodeCanonical(encodedHeader) === undefined ||
    payloadBytes === undefined ||
    signature?.length !== ed25519SignatureBytes
  ) {
    throw new LicenseTokenError(
      'malformed',
      'The token is not three canonical base64url parts with an Ed25519 signature.',
    )
  }
  const key = await keyFor(options.publicKey, typeof header.kid === 'string' ? header.kid : undefined)
  const signingInput = textEncoder.encode(`${encodedHeader}.${encodedPayload}`)
  const isValid = await verifyEd25519(key, signature, signingInput).catch((error: unknown) => {
    throw new LicenseTokenError('invalid_signature', 'The token signature could not be verified.', {
      cause: error,
    })
  })
  if (!isValid) {
    throw new LicenseTokenError(
      'invalid_signature',
      'The token signature does not verify with the product key.',
    )
  }
  const payload = parseObject(payloadBytes)
  if (payload === undefined) {
    throw new LicenseTokenError('malformed', 'The token payload is not a JSON object.')
  }
  checkClaims(payload, options, clock)
  return payload
}

/** What the fast path below uses of node:crypto (typed here: this package is built without Node's types). */
interface NodeCrypto {
  verify(algorithm: null, data: Uint8Array, key: unknown, signature: Uint8Array): boolean
  KeyObject: { from(key: CryptoKey): unknown }
}

/**
 * node:crypto where the runtime has it (Node 20.16+, `process.getBuiltinModule`), looked up at run
 * time so browsers and edge runtimes import nothing Node-only; undefined elsewhere.
 */
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined
const nodeKeys = new WeakMap<CryptoKey, unknown>()

/**
 * An Ed25519 signature check. In Node it is node:crypto's one-shot `verify`, synchronous: WebCrypto's
 * `subtle.verify` runs the same OpenSSL call as a thread-pool job and pays a round trip to the event
 * loop, which made validateLicenseToken 35–55% of a bare verify one call at a time, 67–88% with 8 in
 * flight (docs/performance.md). Elsewhere, WebCrypto.
 */
export async function verifyEd25519(
  key: CryptoKey,
  signature: Uint8Array<ArrayBuffer>,
  data: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  if (nodeCrypto === undefined) {
    return crypto.subtle.verify('Ed25519', key, signature, data)
  }
  let nodeKey = nodeKeys.get(key)
  if (nodeKey === undefined) {
    nodeKey = nodeCrypto.KeyObject.from(key)
    nodeKeys.set(key, nodeKey)
  }
  return nodeCrypto.verify(null, data, nodeKey, signature)
}

function readHeader(encodedHeader: string): JsonObject {
  let bytes: Uint8Array
  try {
    bytes = base64url.decode(encodedHeader)
  } catch (error) {
    throw new LicenseTokenError('malformed', 'The token header is not valid base64url JSON.', {
      cause: error,
    })
  }
  const header = parseObject(bytes)
  if (header === undefined) {
    throw new LicenseTokenError('malformed', 'The token header is not valid base64url JSON.')
  }
  return header
}

function parseObject(bytes: Uint8Array): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(textDecoder.decode(bytes))
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : undefined
  } catch {
    return undefined
  }
}

/** RFC 7515 `crit`: we implement no extension, so a token that requires one is refused (as jose did). */
function checkCritical(crit: unknown): void {
  if (crit === undefined) {
    return
  }
  if (
    !Array.isArray(crit) ||
    crit.length === 0 ||
    crit.some((name) => typeof name !== 'string' || name.length === 0)
  ) {
    throw new LicenseTokenError('malformed', 'The token header "crit" must be a list of names.')
  }
  throw new LicenseTokenError(
    'unsupported_algorithm',
    'The token requires an extension that is not supported.',
  )
}

/** The registered-claim rules jose's jwtVerify applied, with the codes its errors mapped to. */
function checkClaims(payload: JsonObject, options: ValidateLicenseTokenOptions, clock: Clock): void {
  for (const claim of ['exp', 'iat', 'sub', 'jti']) {
    if (payload[claim] === undefined) {
      throw new LicenseTokenError('malformed', `The token lacks the "${claim}" claim.`)
    }
  }
  if (payload.iss !== licenseTokenIssuer) {
    throw new LicenseTokenError('malformed', 'The token is not issued by Keyturn.')
  }
  if (typeof payload.sub !== 'string') {
    throw new LicenseTokenError('malformed', 'The token "sub" claim must be a string.')
  }
  const audiences =
    typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : []
  if (!audiences.includes(options.productId)) {
    throw new LicenseTokenError('product_mismatch', 'The token is for another product.')
  }
  if (typeof payload.iat !== 'number') {
    throw new LicenseTokenError('malformed', 'The token "iat" claim must be a number.')
  }
  const { now, tolerance } = clock
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > now + tolerance)) {
    throw new LicenseTokenError('not_yet_valid', 'The token is not valid yet; check the clock.')
  }
  if (typeof payload.exp !== 'number') {
    throw new LicenseTokenError('malformed', 'The token "exp" claim must be a number.')
  }
  if (payload.exp <= now - tolerance) {
    throw new LicenseTokenError('expired', 'The token has expired.')
  }
}

/** Where each base64url length leaves unused bits in its last character: they must be zero. */
const base64urlAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const unusedBitsMask: Readonly<Record<number, number>> = { 0: 0, 2: 0b1111, 3: 0b11 }

/**
 * Only canonical base64url: decoders ignore stray trailing bits, which would let many spellings of
 * one token pass; those are refused here without a second encoding.
 */
function decodeCanonical(part: string): Uint8Array<ArrayBuffer> | undefined {
  const mask = unusedBitsMask[part.length % 4]
  if (mask === undefined || !/^[A-Za-z0-9_-]*$/.test(part)) {
    return undefined
  }
  if (mask !== 0 && (base64urlAlphabet.indexOf(part.charAt(part.length - 1)) & mask) !== 0) {
    return undefined
  }
  try {
    // jose decodes into a fresh (never shared) ArrayBuffer, which WebCrypto's BufferSource requires.
    return base64url.decode(part) as Uint8Array<ArrayBuffer>
  } catch {
    return undefined
  }
}

export interface ImportedKey {
  readonly kid: string
  readonly key: CryptoKey
}

// Importing a key costs more than verifying a signature: keep the last few imports, by key material
// (PEM text or JWK JSON), and by identity for a JWK object passed again (no JSON.stringify per call).
const importedKeys = new Map<string, Promise<ImportedKey>>()
const importedJwks = new WeakMap<JWK, Promise<ImportedKey>>()
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

/** Imports a public key (PEM or JWK) with its `kid`, once per process; signed answers use it too. */
export function importOnce(input: PublicKeyInput): Promise<ImportedKey> {
  if (typeof input !== 'string') {
    const known = importedJwks.get(input)
    if (known !== undefined) {
      return known
    }
  }
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
  if (typeof input !== 'string') {
    importedJwks.set(input, imported)
    imported.catch(() => importedJwks.delete(input))
  }
  return imported
}

async function importKey(input: PublicKeyInput): Promise<ImportedKey> {
  try {
    if (typeof input === 'string') {
      const key = await importSPKI(input, 'EdDSA', { extractable: true })
      if (key.algorithm.name !== 'Ed25519') {
        throw new TypeError('the PEM is not an Ed25519 key')
      }
      return { kid: await calculateJwkThumbprint(await exportJWK(key), 'sha256'), key }
    }
    const key = await importJWK({ ...input, alg: 'EdDSA' }, 'EdDSA')
    if (!(key instanceof CryptoKey)) {
      throw new TypeError('a symmetric JWK is not a public key')
    }
    if (key.algorithm.name !== 'Ed25519') {
      throw new TypeError('the JWK is not an Ed25519 key')
    }
    return { kid: input.kid ?? (await calculateJwkThumbprint(input, 'sha256')), key }
  } catch (error) {
    throw new TypeError('publicKey must be an Ed25519 public key as PEM (SPKI) or JWK', { cause: error })
  }
}
