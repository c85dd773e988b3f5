/**
 * @module Checks a signed answer of the application-facing routes: the RFC 9421 signature by one of
 * the product's public keys over `@status`, `content-digest`, `date` and the request's `@method` and
 * `@path`; the RFC 9530 digest of the body; the echoed nonce; and `created` and `Date` within a
 * tolerance. Web-standard only (WebCrypto, jose for key import): Node and browsers alike.
 */

import { Type } from 'typebox'
import { Compile } from 'typebox/compile'
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

/** When a verified answer was signed, by the server's clock (epoch seconds). */
export interface AnswerTimes {
  /** The signature's `created`. */
  readonly created: number
  /** The `Date` header, covered by the signature. */
  readonly dated: number
}

/** Resolves when the answer is signed for this request by one of the keys; rejects with `KeyturnSignatureError`. */
export async function checkSignedAnswer(answer: SignedAnswer, check: SignatureCheck): Promise<void> {
  const { created, dated } = await verifySignedAnswer(answer, check.publicKey, check.nonce)
  const now = check.now.getTime() / 1000
  if (Math.abs(now - created) > check.toleranceSeconds || Math.abs(now - dated) > check.toleranceSeconds) {
    throw new KeyturnSignatureError(
      'stale',
      `The answer was signed at ${new Date(created * 1000).toISOString()}, more than ${check.toleranceSeconds} s from now.`,
      new Date(Math.max(created, dated) * 1000),
    )
  }
}

/**
 * Everything `checkSignedAnswer` checks but the time: the signature by one of the keys over this
 * request's answer, the body's digest and the echoed nonce. Resolves with the signed times (so a
 * stored answer can be verified again later); rejects with `KeyturnSignatureError`.
 */
export async function verifySignedAnswer(
  answer: SignedAnswer,
  publicKey: SignatureCheck['publicKey'],
  nonce: string,
): Promise<AnswerTimes> {
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
  const keys = await Promise.all(listOf(publicKey).map(importOnce))
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
  if (echoed !== nonce) {
    throw new KeyturnSignatureError('nonce_mismatch', 'The answer is not for this request (another nonce).')
  }
  const created = Number(createdText)
  const dated = Date.parse(date) / 1000
  if (!Number.isFinite(dated)) {
    throw new KeyturnSignatureError('malformed', 'The signed Date header is not a date.')
  }
  return { created, dated }
}

/** The signed parts of an answer, kept to be verified again later (`readSignedAnswer`). */
const keptHeaders = ['signature-input', 'signature', 'content-digest', 'date'] as const

const KeptAnswerSchema = Type.Object({
  status: Type.Integer(),
  method: Type.String(),
  path: Type.String(),
  nonce: Type.String(),
  headers: Type.Object({
    'signature-input': Type.String(),
    signature: Type.String(),
    'content-digest': Type.String(),
    date: Type.String(),
  }),
  body: Type.String(),
})
let compiledKeptAnswer: ReturnType<typeof compileKeptAnswer> | undefined
function compileKeptAnswer() {
  return Compile(KeptAnswerSchema)
}
/** Compiled on first use (TypeBox interprets instead where a strict CSP forbids code generation). */
function keptAnswerValidator(): ReturnType<typeof compileKeptAnswer> {
  compiledKeptAnswer ??= compileKeptAnswer()
  return compiledKeptAnswer
}

/** An answer and the nonce it echoes as JSON text: what `readSignedAnswer` takes back. */
export function serializeSignedAnswer(answer: SignedAnswer, nonce: string): string {
  return JSON.stringify({
    status: answer.status,
    method: answer.method,
    path: answer.path,
    nonce,
    headers: Object.fromEntries(keptHeaders.map((name) => [name, answer.headers.get(name) ?? ''])),
    body: new TextDecoder().decode(answer.body),
  })
}

/**
 * A serialised answer verified again (`verifySignedAnswer`: signature, digest, nonce; not its age):
 * its parsed body and signed times. Rejects with `KeyturnSignatureError` (`malformed` for text that
 * is not a kept answer).
 */
export async function readSignedAnswer(
  text: string,
  publicKey: SignatureCheck['publicKey'],
): Promise<{ readonly answer: SignedAnswer; readonly times: AnswerTimes }> {
  const malformed = () =>
    new KeyturnSignatureError('malformed', 'The kept answer is not one this client wrote.')
  let record: unknown
  try {
    record = JSON.parse(text)
  } catch {
    throw malformed()
  }
  if (!keptAnswerValidator().Check(record)) {
    throw malformed()
  }
  const { headers } = record
  let json: unknown
  try {
    json = JSON.parse(record.body)
  } catch {
    throw malformed()
  }
  const answer: SignedAnswer = {
    status: record.status,
    headers: new Headers(keptHeaders.map((name): [string, string] => [name, headers[name]])),
    body: new TextEncoder().encode(record.body),
    json,
    method: record.method,
    path: record.path,
  }
  return { answer, times: await verifySignedAnswer(answer, publicKey, record.nonce) }
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
