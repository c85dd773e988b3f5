/**
 * @module Checks a signed answer of the application-facing routes: the RFC 9421 signature by one of
 * the product's public keys over `@status`, `content-digest`, `date` and the request's `@method` and
 * `@path`; the RFC 9530 digest of the body; the echoed nonce; and `created` and `Date` within a
 * tolerance. Web-standard only (WebCrypto, jose for key import): Node and browsers alike.
 */
import {
  answerCoveredComponents,
  answerSignatureBase,
  signAlgorithm,
  signatureLabel,
} from '../../protocol/src/index.js'
import { KeyturnSignatureError } from './errors.js'
import { importOnce, type PublicKeyInput, verifyEd25519 } from './validate-license-token.js'

export interface SignedAnswer {
  readonly status: number
  readonly headers: Headers
  /** The body exactly as received. */
  readonly body: Uint8Array
  /** The parsed body. */
  readonly json: unknown
  readonly method: string
  /** The request's path, without the query. */
  readonly path: string
}

export interface SignatureCheck {
  readonly publicKey: PublicKeyInput | readonly PublicKeyInput[]
  /** The nonce this request sent. */
  readonly nonce: string
  readonly now: Date
  readonly toleranceSeconds: number
}

const inputPattern = new RegExp(
  `^${signatureLabel}=(${escapeRegExp(answerCoveredComponents)};created=(\\d{1,12});keyid="([A-Za-z0-9_-]{1,128})";alg="${signAlgorithm}")$`,
)
const signaturePattern = new RegExp(`^${signatureLabel}=:([A-Za-z0-9+/]+={0,2}):$`)
const digestPattern = /(?:^|,\s*)sha-256=:([A-Za-z0-9+/]+={0,2}):/

/** A fresh random nonce: 128 bits, hex. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** Resolves when the answer is signed for this request by one of the keys; rejects with `KeyturnSignatureError`. */
export async function checkSignedAnswer(answer: SignedAnswer, check: SignatureCheck): Promise<void> {
  const input = answer.headers.get('signature-input')
  const signature = answer.headers.get('signature')
  const digest = answer.headers.get('content-digest')
  const date = answer.headers.get('date')
  if (input === null || signature === null || digest === null || date === null) {
    throw new KeyturnSignatureError(
      'unsigned',
      'The answer carries no signature (Signature, Signature-Input, Content-Digest and Date are required).',
    )
  }
  const parsedInput = inputPattern.exec(input.trim())
  const parsedSignature = signaturePattern.exec(signature.trim())
  const sentDigest = digestPattern.exec(digest)?.[1]
  if (parsedInput === null || parsedSignature === null || sentDigest === undefined) {
    throw new KeyturnSignatureError('malformed', 'The signature headers are not in the form Keyturn signs.')
  }
  const [, signatureParams = '', createdText = '', keyId = ''] = parsedInput
  const keys = await Promise.all(listOf(check.publicKey).map(importOnce))
  const key = keys.find((candidate) => candidate.kid === keyId)
  if (key === undefined) {
    throw new KeyturnSignatureError(
      'unknown_key',
      `No configured public key has the answer's key id (${keyId}).`,
    )
  }
  const base = answerSignatureBase({
    status: answer.status,
    contentDigest: digest,
    date,
    method: answer.method,
    path: answer.path,
    signatureParams,
  })
  const isValid = await verifyEd25519(
    key.key,
    new Uint8Array(toArrayBuffer(fromBase64(parsedSignature[1] ?? ''))),
    new TextEncoder().encode(base),
  )
  if (!isValid) {
    throw new KeyturnSignatureError('invalid_signature', 'The answer’s signature does not verify.')
  }
  const bodyDigest = new Uint8Array(await crypto.subtle.digest('SHA-256', toArrayBuffer(answer.body)))
  if (toBase64(bodyDigest) !== sentDigest) {
    throw new KeyturnSignatureError('digest_mismatch', 'The answer’s body does not match its signed digest.')
  }
  const echoed = (answer.json as { nonce?: unknown } | null)?.nonce
  if (echoed !== check.nonce) {
    throw new KeyturnSignatureError('nonce_mismatch', 'The answer is not for this request (another nonce).')
  }
  const now = check.now.getTime() / 1000
  const created = Number(createdText)
  const dated = Date.parse(date) / 1000
  if (
    !Number.isFinite(dated) ||
    Math.abs(now - created) > check.toleranceSeconds ||
    Math.abs(now - dated) > check.toleranceSeconds
  ) {
    throw new KeyturnSignatureError(
      'stale',
      `The answer was signed at ${new Date(created * 1000).toISOString()}, more than ${check.toleranceSeconds} s from now.`,
    )
  }
}

function listOf(value: SignatureCheck['publicKey']): readonly PublicKeyInput[] {
  const list: readonly PublicKeyInput[] = Array.isArray(value) ? value : [value as PublicKeyInput]
  if (list.length === 0) {
    throw new TypeError('publicKey needs at least one public key')
  }
  return list
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0))
}

function toBase64(bytes: Uint8Array): string {
  return btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(''))
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
}
