/**
 * @module Offline verification of license files (docs/guides/offline.md, "The file format"):
 * armour, clear header, Ed25519 signature by the product key, product, lifetime, then the payload,
 * decrypted with AES-256-GCM when the file is encrypted. WebCrypto only: Node, browsers, Deno, Bun.
 */
import { base64url } from 'jose'
import { Compile } from 'typebox/compile'
import {
  canonicalLicenseKey,
  type LicenseFileHeader,
  LicenseFileHeaderSchema,
  type LicenseFileLicense,
  LicenseFilePayloadSchema,
  licenseFileBegin,
  licenseFileEnd,
  licenseFileKdfInfo,
  maxLicenseFileLength,
  maxLicenseFilePbkdf2Iterations,
  minLicenseFilePbkdf2Iterations,
} from '../../protocol/src/index.js'
import { readClockTolerance, readNow } from './clock.js'
import { LicenseFileError } from './errors.js'
import { importOnce, type PublicKeyInput, verifyEd25519 } from './validate-license-token.js'

export interface VerifyLicenseFileOptions {
  /** The product the file must be for. */
  readonly productId: string
  /** The product's public key, or several (current and retired). */
  readonly publicKey: PublicKeyInput | readonly PublicKeyInput[]
  /** The license key: needed to read an encrypted file. */
  readonly licenseKey?: string
  /**
   * This machine's fingerprint: a machine file must be bound to it (`fingerprint_mismatch`), and
   * an encrypted machine file cannot be read without it (`decryption_failed`).
   */
  readonly fingerprint?: string
  /** The time to judge at; defaults to now. An Invalid Date is refused with an `InvalidOptionError`. */
  readonly now?: Date
  /** Accepted clock skew in seconds (default 0, at most 3600); NaN, Infinity or negative are refused. */
  readonly clockToleranceSeconds?: number
  /** Entitlement codes the license must carry, else `entitlements_missing`. */
  readonly requireEntitlements?: readonly string[]
}

/** The result: the token result's fields, the file's own expiry and what the file says of the license. */
export interface LicenseFileResult {
  readonly licenseId: string
  readonly productId: string
  /** When the file expires (ISO 8601); `null`: never. */
  readonly expiresAt: string | null
  /** When the file was issued (ISO 8601). */
  readonly issuedAt: string
  /** Always `{}`: license files carry no custom payload (kept for the token result's shape). */
  readonly customFields: Readonly<Record<string, unknown>>
  /** The machine the file is bound to, when it is. */
  readonly fingerprint?: string
  /** The activation the file is bound to, when it is. */
  readonly activationId?: string
  /**
   * A file from offline activation: the secret that keys this machine's deactivation codes
   * (`createDeactivationCode`). Keep it with the file; never show it.
   */
  readonly deactivationSecret?: string
  readonly entitlements: readonly string[]
  /** When the application must next validate online (ISO 8601); absent: no check-in required. */
  readonly checkInBy?: string
  /** Seconds of grace after `checkInBy` the license's policy allows; absent when it sets none. */
  readonly gracePeriod?: number
  readonly license: LicenseFileLicense
  /** The signing key's id. */
  readonly keyId: string
  readonly encrypted: boolean
}

const textEncoder = new TextEncoder()
const textDecoder = new TextDecoder()
const signatureBytes = 64
const headerValidator = lazy(() => Compile(LicenseFileHeaderSchema))
const payloadValidator = lazy(() => Compile(LicenseFilePayloadSchema))

/**
 * Verifies a license file offline; rejects with a `LicenseFileError` whose `code` says why.
 *
 * @example
 * ```ts
 * import { verifyLicenseFile } from '@keyturn/client'
 *
 * const result = await verifyLicenseFile(fileText, { productId: 'prd_…', publicKey: PRODUCT_PUBLIC_KEY_PEM, licenseKey })
 * console.log(result.licenseId, result.entitlements, result.expiresAt)
 * ```
 */
export async function verifyLicenseFile(
  file: string,
  options: VerifyLicenseFileOptions,
): Promise<LicenseFileResult> {
  // The clock options first: an invalid one must never widen what is accepted.
  const now = readNow(options.now)
  const tolerance = readClockTolerance(options.clockToleranceSeconds) * 1000
  const { encodedHeader, encodedPayload, signature } = readArmour(file)
  const header = readHeader(encodedHeader)
  if (header.alg !== 'EdDSA') {
    throw new LicenseFileError('unsupported_algorithm', `Only EdDSA files are accepted, not ${header.alg}.`)
  }
  const key = await keyFor(options.publicKey, header.kid)
  const payloadBytes = decode(encodedPayload)
  const isValid = await verifyEd25519(
    key,
    signature,
    textEncoder.encode(`${encodedHeader}.${encodedPayload}`),
  ).catch(() => false)
  if (!isValid) {
    throw new LicenseFileError(
      'invalid_signature',
      'The file signature does not verify with the product key.',
    )
  }
  if (header.productId !== options.productId) {
    throw new LicenseFileError('product_mismatch', 'The file is for another product.')
  }
  const issued = readTime(header.issued)
  if (issued > now + tolerance) {
    throw new LicenseFileError('not_yet_valid', 'The file is not valid yet; check the clock.')
  }
  if (header.expiry !== null && readTime(header.expiry) <= now - tolerance) {
    throw new LicenseFileError('expired', 'The file has expired.')
  }
  const clear =
    header.encryption === undefined
      ? payloadBytes
      : await decrypt(header, encodedHeader, payloadBytes, options)
  const payload = parseJson(clear)
  if (!payloadValidator().Check(payload)) {
    throw new LicenseFileError('malformed', 'The file payload is not a license.')
  }
  const { license, machine } = payload
  if (options.fingerprint !== undefined && machine?.fingerprint !== options.fingerprint) {
    throw new LicenseFileError('fingerprint_mismatch', 'The file is bound to another machine, or to none.')
  }
  const missing = (options.requireEntitlements ?? []).filter((code) => !license.entitlements.includes(code))
  if (missing.length > 0) {
    throw new LicenseFileError(
      'entitlements_missing',
      `The license does not carry the entitlement${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
    )
  }
  return {
    licenseId: license.id,
    productId: header.productId,
    expiresAt: header.expiry,
    issuedAt: header.issued,
    customFields: {},
    ...(machine === undefined
      ? {}
      : {
          fingerprint: machine.fingerprint,
          activationId: machine.activationId,
          ...(machine.secret === undefined ? {} : { deactivationSecret: machine.secret }),
        }),
    entitlements: license.entitlements,
    ...(payload.checkInBy === undefined ? {} : { checkInBy: payload.checkInBy }),
    ...(payload.gracePeriod === undefined ? {} : { gracePeriod: payload.gracePeriod }),
    license,
    keyId: header.kid,
    encrypted: header.encryption !== undefined,
  }
}

interface Armour {
  readonly encodedHeader: string
  readonly encodedPayload: string
  readonly signature: Uint8Array<ArrayBuffer>
}

function readArmour(file: unknown): Armour {
  if (typeof file !== 'string' || file.length > maxLicenseFileLength) {
    throw new LicenseFileError(
      'malformed',
      `A license file is text of at most ${maxLicenseFileLength} characters.`,
    )
  }
  const text = file.trim()
  if (!text.startsWith(licenseFileBegin) || !text.endsWith(licenseFileEnd)) {
    throw new LicenseFileError(
      'malformed',
      `A license file starts with ${licenseFileBegin} and ends with ${licenseFileEnd}.`,
    )
  }
  const body = text.slice(licenseFileBegin.length, text.length - licenseFileEnd.length).replace(/\s+/g, '')
  const parts = body.split('.')
  const [encodedHeader = '', encodedPayload = '', encodedSignature = ''] = parts
  if (parts.length !== 3 || ![encodedHeader, encodedPayload, encodedSignature].every(isBase64url)) {
    throw new LicenseFileError('malformed', 'A license file body is three dot-separated base64url parts.')
  }
  const signature = decode(encodedSignature)
  if (signature.length !== signatureBytes) {
    throw new LicenseFileError('malformed', 'A license file signature is 64 bytes (Ed25519).')
  }
  return { encodedHeader, encodedPayload, signature }
}

function readHeader(encodedHeader: string): LicenseFileHeader {
  const header = parseJson(decode(encodedHeader))
  if (
    !headerValidator().Check(header) ||
    !isTime(header.issued) ||
    (header.expiry !== null && !isTime(header.expiry))
  ) {
    throw new LicenseFileError('malformed', 'The file header is not a Keyturn license-file header.')
  }
  return header
}

async function keyFor(publicKey: VerifyLicenseFileOptions['publicKey'], kid: string): Promise<CryptoKey> {
  const inputs: readonly PublicKeyInput[] = Array.isArray(publicKey)
    ? publicKey
    : [publicKey as PublicKeyInput]
  if (inputs.length === 0) {
    throw new TypeError('verifyLicenseFile needs at least one public key')
  }
  const keys = await Promise.all(inputs.map(importOnce))
  const match = keys.find((candidate) => candidate.kid === kid)
  if (match === undefined) {
    throw new LicenseFileError('unknown_key', `No configured public key has the file's key id (${kid}).`)
  }
  return match.key
}

/** AES-256-GCM with the header (as encoded) as additional data, under the key the header's KDF derives. */
async function decrypt(
  header: LicenseFileHeader,
  encodedHeader: string,
  ciphertext: Uint8Array<ArrayBuffer>,
  options: VerifyLicenseFileOptions,
): Promise<Uint8Array<ArrayBuffer>> {
  const encryption = header.encryption
  if (encryption === undefined) {
    return ciphertext
  }
  if (options.licenseKey === undefined) {
    throw new LicenseFileError('decryption_failed', 'The file is encrypted: give the license key to read it.')
  }
  if (encryption.machineBound && options.fingerprint === undefined) {
    throw new LicenseFileError(
      'decryption_failed',
      "The file is encrypted for a machine: give this machine's fingerprint to read it.",
    )
  }
  const licenseKey =
    header.keyFormat === 'keyturn' ? canonicalLicenseKey(options.licenseKey) : options.licenseKey
  const material = textEncoder.encode(
    encryption.machineBound ? `${licenseKey}\n${options.fingerprint}` : licenseKey,
  )
  const salt = decode(encryption.salt)
  const iv = decode(encryption.iv)
  if (salt.length !== 16 || iv.length !== 12) {
    throw new LicenseFileError('malformed', 'The file encryption needs a 16-byte salt and a 12-byte iv.')
  }
  const base = await crypto.subtle.importKey(
    'raw',
    material,
    encryption.kdf === 'HKDF-SHA256' ? 'HKDF' : 'PBKDF2',
    false,
    ['deriveKey'],
  )
  let algorithm: HkdfParams | Pbkdf2Params
  if (encryption.kdf === 'HKDF-SHA256') {
    algorithm = { name: 'HKDF', hash: 'SHA-256', salt, info: textEncoder.encode(licenseFileKdfInfo) }
  } else {
    const iterations = encryption.iterations
    if (
      iterations === undefined ||
      iterations < minLicenseFilePbkdf2Iterations ||
      iterations > maxLicenseFilePbkdf2Iterations
    ) {
      throw new LicenseFileError(
        'malformed',
        `PBKDF2 needs from ${minLicenseFilePbkdf2Iterations} to ${maxLicenseFilePbkdf2Iterations} iterations.`,
      )
    }
    algorithm = { name: 'PBKDF2', hash: 'SHA-256', salt, iterations }
  }
  const key = await crypto.subtle.deriveKey(algorithm, base, { name: 'AES-GCM', length: 256 }, false, [
    'decrypt',
  ])
  try {
    const clear = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv, additionalData: textEncoder.encode(encodedHeader), tagLength: 128 },
      key,
      ciphertext,
    )
    return new Uint8Array(clear)
  } catch (error) {
    throw new LicenseFileError(
      'decryption_failed',
      'The file could not be decrypted: another license key, or (for a machine file) another machine.',
      { cause: error },
    )
  }
}

function isBase64url(part: string): boolean {
  return part.length > 0 && part.length % 4 !== 1 && /^[A-Za-z0-9_-]+$/.test(part)
}

function decode(part: string): Uint8Array<ArrayBuffer> {
  try {
    return base64url.decode(part) as Uint8Array<ArrayBuffer>
  } catch (error) {
    throw new LicenseFileError('malformed', 'A license file part is not base64url.', { cause: error })
  }
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(textDecoder.decode(bytes))
  } catch (error) {
    throw new LicenseFileError('malformed', 'A license file part is not JSON.', { cause: error })
  }
}

const isoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/
function isTime(value: string): boolean {
  return isoTime.test(value) && Number.isFinite(Date.parse(value))
}

function readTime(value: string): number {
  return Date.parse(value)
}

function lazy<T>(make: () => T): () => T {
  let value: T | undefined
  return () => {
    value ??= make()
    return value
  }
}
