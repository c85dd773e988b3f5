/**
 * @module Offline activation on the machine (docs/guides/offline.md, "Air-gapped machines"): the
 * activation request file it hands to the vendor, and the deactivation code it prints when it gives
 * its seat back. WebCrypto only: Node, browsers, Deno and Bun.
 */
import { base64url } from 'jose'
import {
  type ActivationRequestPayload,
  activationRequestBegin,
  activationRequestEnd,
  activationRequestFormat,
  activationRequestKeyHintBytes,
  canonicalLicenseKey,
  deactivationCodeContext,
  deactivationCodeGroupLength,
  deactivationCodeMacBytes,
} from '../../protocol/src/index.js'
import { InvalidOptionError, readNow } from './clock.js'

export interface CreateActivationRequestOptions {
  /** The license key the user entered (a Keyturn key in any spelling; a custom key exactly). */
  readonly licenseKey: string
  readonly productId: string
  /** This machine's fingerprint (`machineFingerprint` from `@keyturn/client/node`). */
  readonly fingerprint: string
  /** The activation's name, e.g. the host name (1 to 200 characters). */
  readonly name?: string
  /** Stored as the activation's `metadata.platform`, e.g. `linux-x64` (1 to 100 characters). */
  readonly platform?: string
  /** The request's time; defaults to now. */
  readonly now?: Date
}

const encoder = new TextEncoder()

/**
 * Writes an activation request file for a machine without a network: the text to hand to the
 * vendor (`keyturn offline activate`, the dashboard, `POST /licenses/activate-offline`), who answers
 * with the machine's license file. It holds no license key: an HMAC keyed by it proves the key.
 *
 * @example
 * ```ts
 * import { createActivationRequest } from '@keyturn/client'
 *
 * const requestFile = await createActivationRequest({ licenseKey, productId: 'prd_…', fingerprint, name: 'Lab PC 4' })
 * ```
 */
export async function createActivationRequest(options: CreateActivationRequestOptions): Promise<string> {
  const created = new Date(readYearsOneTo9999(options.now)).toISOString()
  requireText('productId', options.productId, 64)
  requireText('fingerprint', options.fingerprint, 256)
  if (options.name !== undefined) {
    requireText('name', options.name, 200)
  }
  if (options.platform !== undefined) {
    requireText('platform', options.platform, 100)
  }
  requireText('licenseKey', options.licenseKey, 256)
  return encodeActivationRequest(options.licenseKey, {
    productId: options.productId,
    fingerprint: options.fingerprint,
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.platform === undefined ? {} : { platform: options.platform }),
    nonce: base64url.encode(crypto.getRandomValues(new Uint8Array(16))),
    created,
  })
}

/** The request file for these fields (internal: the conformance vectors fix the nonce and time). */
export async function encodeActivationRequest(
  licenseKey: string,
  fields: Omit<ActivationRequestPayload, 'format' | 'keyHint'>,
): Promise<string> {
  const key = encoder.encode(canonicalLicenseKey(licenseKey))
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', key))
  const payload: ActivationRequestPayload = {
    format: activationRequestFormat,
    productId: fields.productId,
    keyHint: base64url.encode(digest.subarray(0, activationRequestKeyHintBytes)),
    fingerprint: fields.fingerprint,
    ...(fields.name === undefined ? {} : { name: fields.name }),
    ...(fields.platform === undefined ? {} : { platform: fields.platform }),
    nonce: fields.nonce,
    created: fields.created,
  }
  const signedPart = base64url.encode(JSON.stringify(payload))
  const mac = await hmac(key, signedPart)
  const lines = `${signedPart}.${base64url.encode(mac)}`.match(/.{1,64}/g) ?? []
  return `${activationRequestBegin}\n${lines.join('\n')}\n${activationRequestEnd}\n`
}

export interface CreateDeactivationCodeOptions {
  /** The activation the machine's license file is bound to (`verifyLicenseFile`'s `activationId`). */
  readonly activationId: string
  /** `verifyLicenseFile`'s `deactivationSecret`: only files from offline activation carry one. */
  readonly secret: string
  /** The code's time; defaults to now. */
  readonly now?: Date
}

const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/**
 * The code that proves to the vendor that this machine gave its seat back: its time (to the
 * minute) and an HMAC of the activation id and that time under the machine's deactivation secret,
 * as 16 characters in groups of four (`Q2M4-7XKD-3H9P-T6WB`) for reading over the phone. Delete the
 * machine's license file (and secret) before showing it.
 *
 * @example
 * ```ts
 * import { createDeactivationCode } from '@keyturn/client'
 *
 * const code = await createDeactivationCode({ activationId: result.activationId, secret: result.deactivationSecret })
 * ```
 */
export async function createDeactivationCode(options: CreateDeactivationCodeOptions): Promise<string> {
  const time = readYearsOneTo9999(options.now)
  if (time < 0) {
    throw new InvalidOptionError('now', '`now` must be a time in the years 1970 to 9999.')
  }
  const minute = Math.floor(time / 60_000)
  requireText('activationId', options.activationId, 64)
  if (typeof options.secret !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(options.secret)) {
    throw new InvalidOptionError(
      'secret',
      '`secret` must be the 43-character deactivation secret of a machine file.',
    )
  }
  const mac = await hmac(
    base64url.decode(options.secret),
    `${deactivationCodeContext}\n${options.activationId}\n${minute}`,
  )
  const bytes = new Uint8Array(4 + deactivationCodeMacBytes)
  new DataView(bytes.buffer).setUint32(0, minute)
  bytes.set(mac.subarray(0, deactivationCodeMacBytes), 4)
  let bits = 0n
  for (const byte of bytes) {
    bits = (bits << 8n) | BigInt(byte)
  }
  const characters = (bytes.length * 8) / 5
  let text = ''
  for (let i = characters - 1; i >= 0; i -= 1) {
    text += crockford[Number((bits >> BigInt(i * 5)) & 31n)]
  }
  return (text.match(new RegExp(`.{1,${deactivationCodeGroupLength}}`, 'g')) ?? [text]).join('-')
}

/** Latest time of the year 9999 (ms): later years have no `YYYY` form the server reads. */
const endOfYear9999 = Date.UTC(10000, 0, 1) - 1

/** `now` (see `readNow`), refused outside the years 1 to 9999. */
function readYearsOneTo9999(now: Date | undefined): number {
  const time = readNow(now)
  if (time > endOfYear9999 || new Date(time).getUTCFullYear() < 1) {
    throw new InvalidOptionError('now', '`now` must be a time in the years 1 to 9999.')
  }
  return time
}

async function hmac(key: Uint8Array, message: string): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey(
    'raw',
    key as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  return new Uint8Array(await crypto.subtle.sign('HMAC', imported, encoder.encode(message)))
}

function requireText(option: string, value: unknown, max: number): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw new InvalidOptionError(option, `\`${option}\` must be a string of 1 to ${max} characters.`)
  }
}
