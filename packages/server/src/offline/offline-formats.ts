/**
 * @module The server's side of the offline formats (docs/guides/offline.md, "Air-gapped machines"):
 * reading activation request files, the per-activation deactivation secret, and checking
 * deactivation codes. `@keyturn/client` writes both; the layouts live in `@keyturn/protocol`.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import {
  type ActivationRequestPayload,
  ActivationRequestPayloadSchema,
  activationRequestBegin,
  activationRequestEnd,
  activationRequestFormat,
  activationRequestKeyHintBytes,
  canonicalLicenseKey,
  deactivationCodeContext,
  deactivationCodeGroupLength,
  deactivationCodeMacBytes,
  maxActivationRequestLength,
} from '@keyturn/protocol'
import { Compile } from 'typebox/compile'

const payloadValidator = Compile(ActivationRequestPayloadSchema)
const base64url = /^[A-Za-z0-9_-]+$/
const macLength = 43 // base64url of the 32-byte HMAC-SHA256

/** `keyHint`: base64url of the first 12 bytes of SHA-256 of the license key as stored. */
export function licenseKeyHint(storedKey: string): string {
  return createHash('sha256')
    .update(storedKey, 'utf8')
    .digest()
    .subarray(0, activationRequestKeyHintBytes)
    .toString('base64url')
}

export interface ParsedActivationRequest {
  readonly payload: ActivationRequestPayload
  /** The encoded payload as it appears in the file: the HMAC's input. */
  readonly signedPart: string
  readonly mac: Buffer
}

/** Why a request file is refused; the route answers 400 `activation_request_invalid` with it. */
export class ActivationRequestError extends Error {}

/** Reads a request file's armour, parts and payload; the HMAC is checked later, with a license's key. */
export function parseActivationRequest(text: string): ParsedActivationRequest {
  if (text.length > maxActivationRequestLength) {
    throw new ActivationRequestError(`A request file is at most ${maxActivationRequestLength} characters.`)
  }
  const trimmed = text.trim()
  if (!trimmed.startsWith(activationRequestBegin) || !trimmed.endsWith(activationRequestEnd)) {
    throw new ActivationRequestError(
      `Not an activation request file: it must start with ${activationRequestBegin} and end with ${activationRequestEnd}.`,
    )
  }
  const body = trimmed
    .slice(activationRequestBegin.length, trimmed.length - activationRequestEnd.length)
    .replace(/\s+/g, '')
  const parts = body.split('.')
  const [signedPart, encodedMac] = parts
  if (
    parts.length !== 2 ||
    signedPart === undefined ||
    encodedMac === undefined ||
    !base64url.test(signedPart) ||
    encodedMac.length !== macLength ||
    !base64url.test(encodedMac)
  ) {
    throw new ActivationRequestError('The request body must be two base64url parts: PAYLOAD.HMAC.')
  }
  let payload: unknown
  try {
    payload = JSON.parse(Buffer.from(signedPart, 'base64url').toString('utf8'))
  } catch {
    throw new ActivationRequestError('The request payload is not JSON.')
  }
  if (
    typeof payload === 'object' &&
    payload !== null &&
    'format' in payload &&
    payload.format !== activationRequestFormat
  ) {
    throw new ActivationRequestError(`Unknown request format; this server reads ${activationRequestFormat}.`)
  }
  if (!payloadValidator.Check(payload)) {
    const first = [...payloadValidator.Errors(payload)][0]
    throw new ActivationRequestError(
      `The request payload is not valid${first === undefined ? '' : ` at ${first.instancePath || '/'}: ${first.message}`}.`,
    )
  }
  if (
    !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(payload.created) ||
    !Number.isFinite(Date.parse(payload.created))
  ) {
    throw new ActivationRequestError('The request payload is not valid at /created: an ISO 8601 UTC time.')
  }
  return { payload, signedPart, mac: Buffer.from(encodedMac, 'base64url') }
}

/** Whether the request's HMAC was made with this license key (as stored); constant time. */
export function requestMadeWithKey(request: ParsedActivationRequest, storedKey: string): boolean {
  const expected = createHmac('sha256', Buffer.from(storedKey, 'utf8'))
    .update(request.signedPart, 'latin1')
    .digest()
  return timingSafeEqual(expected, request.mac)
}

/**
 * Writes a request file as `@keyturn/client`'s `createActivationRequest` does (synchronously, for
 * tests and the route catalogue); `licenseKey` is canonicalised when shaped like Keyturn's.
 */
export function writeActivationRequest(
  licenseKey: string,
  payload: Omit<ActivationRequestPayload, 'format' | 'keyHint'>,
): string {
  const key = canonicalLicenseKey(licenseKey)
  const full: ActivationRequestPayload = {
    format: activationRequestFormat,
    productId: payload.productId,
    keyHint: licenseKeyHint(key),
    fingerprint: payload.fingerprint,
    ...(payload.name === undefined ? {} : { name: payload.name }),
    ...(payload.platform === undefined ? {} : { platform: payload.platform }),
    nonce: payload.nonce,
    created: payload.created,
  }
  const signedPart = Buffer.from(JSON.stringify(full), 'utf8').toString('base64url')
  const mac = createHmac('sha256', Buffer.from(key, 'utf8')).update(signedPart, 'latin1').digest('base64url')
  const lines = `${signedPart}.${mac}`.match(/.{1,64}/g) ?? []
  return `${activationRequestBegin}\n${lines.join('\n')}\n${activationRequestEnd}\n`
}

/** The activation's deactivation secret (32 bytes, base64url), derived from the server's key for them. */
export function deactivationSecret(serverKey: Buffer, activationId: string): string {
  return createHmac('sha256', serverKey)
    .update(`${deactivationCodeContext} secret\n${activationId}`, 'utf8')
    .digest('base64url')
}

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const codeBytes = 4 + deactivationCodeMacBytes
const codeCharacters = (codeBytes * 8) / 5

/** The HMAC part of a code made at `minute` (minutes since 1970) for the activation. */
export function deactivationCodeMac(secret: string, activationId: string, minute: number): Buffer {
  return createHmac('sha256', Buffer.from(secret, 'base64url'))
    .update(`${deactivationCodeContext}\n${activationId}\n${minute}`, 'utf8')
    .digest()
    .subarray(0, deactivationCodeMacBytes)
}

/** A code as the client prints it: Crockford base32 of minute (4 bytes, big-endian) || mac, in groups. */
export function formatDeactivationCode(minute: number, mac: Buffer): string {
  const bytes = Buffer.alloc(codeBytes)
  bytes.writeUInt32BE(minute, 0)
  mac.copy(bytes, 4)
  let bits = 0n
  for (const byte of bytes) {
    bits = (bits << 8n) | BigInt(byte)
  }
  let text = ''
  for (let i = codeCharacters - 1; i >= 0; i -= 1) {
    text += crockford[Number((bits >> BigInt(i * 5)) & 31n)]
  }
  return text.match(new RegExp(`.{1,${deactivationCodeGroupLength}}`, 'g'))?.join('-') ?? text
}

/** The minute and mac a typed code carries (case, dashes, spaces, O/I/L forgiven); undefined if malformed. */
export function parseDeactivationCode(code: string): { minute: number; mac: Buffer } | undefined {
  const text = code.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1')
  if (text.length !== codeCharacters) {
    return undefined
  }
  let bits = 0n
  for (const character of text) {
    const value = crockford.indexOf(character)
    if (value < 0) {
      return undefined
    }
    bits = (bits << 5n) | BigInt(value)
  }
  const bytes = Buffer.alloc(codeBytes)
  for (let i = codeBytes - 1; i >= 0; i -= 1) {
    bytes[i] = Number(bits & 255n)
    bits >>= 8n
  }
  return { minute: bytes.readUInt32BE(0), mac: bytes.subarray(4) }
}
