/**
 * @module Idempotency keys: a POST sent with `Idempotency-Key` runs once per API key and key; a
 * retry of the same request gets the first response again (RFC draft "The Idempotency-Key HTTP
 * Header Field", as Stripe and others implement it).
 */
import { createHash } from 'node:crypto'
import type { ApiKeyId } from '@keyturn/protocol'

/** The longest `Idempotency-Key` accepted (characters). */
export const maxIdempotencyKeyLength = 255
/** How long a finished request's response is kept and replayed. */
export const idempotencyRetentionMs = 24 * 60 * 60 * 1000
/**
 * How long a claim holds while its request runs. A request lasts milliseconds; a claim this old
 * belongs to a process that died mid-request, and a retry may take it over.
 */
export const idempotencyLeaseMs = 60 * 1000

/** The response a finished request gave, replayed byte for byte. */
export interface StoredResponse {
  readonly status: number
  readonly contentType: string | null
  /** null: no body (204). */
  readonly body: string | null
}

/** One key of one API key: claimed by a running request, or holding the response it gave. */
export interface IdempotencyRecord {
  readonly apiKeyId: ApiKeyId
  readonly key: string
  /** requestHash of the request that claimed the key. */
  readonly requestHash: string
  /** The id of the request that claimed the key (`req_…`): only it may finish or release the claim. */
  readonly requestId: string
  /** null while the request runs. */
  readonly response: StoredResponse | null
  readonly createdAt: Date
  /** After this the record is ignored, and the key may be claimed anew. */
  readonly expiresAt: Date
}

/** What identifies a request for comparing a retry with the first: method, path and body. */
export interface RequestDescription {
  readonly method: string
  /** The path with its query string, as sent. */
  readonly url: string
  readonly body: unknown
}

/**
 * SHA-256 of the method, the path and the body as canonical JSON (object keys sorted), so a retry
 * that serialises the same body differently (spacing, key order) is still the same request.
 */
export function requestHash(request: RequestDescription): string {
  return createHash('sha256')
    .update(`${request.method.toUpperCase()} ${request.url}\n${canonicalJson(request.body)}`)
    .digest('hex')
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonicalJson).join(',')}]`
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
