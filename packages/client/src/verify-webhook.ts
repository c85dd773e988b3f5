import { Webhook } from 'standardwebhooks'
import { Type } from 'typebox'
import { Check } from 'typebox/value'
import type { EventResource } from '../../protocol/src/index.js'
import { readNow } from './clock.js'

/**
 * What every Keyturn event has, whatever its type: the envelope. The type, the actor's kind and the
 * data are not checked against what this version of the client knows, so an application keeps
 * accepting deliveries when the server adds an event type or a kind of actor.
 */
const EventEnvelopeSchema = Type.Object({
  id: Type.String({ minLength: 1 }),
  object: Type.Literal('Event'),
  type: Type.String({ minLength: 1 }),
  occurredAt: Type.String(),
  productId: Type.Union([Type.String(), Type.Null()]),
  actor: Type.Object({ type: Type.String({ minLength: 1 }), id: Type.String() }),
  requestId: Type.Union([Type.String(), Type.Null()]),
  data: Type.Record(Type.String(), Type.Unknown()),
})

export interface VerifyWebhookOptions {
  /** The raw request body, exactly as received (not re-serialised JSON). */
  readonly payload: string
  /** The request's headers: `webhook-id`, `webhook-timestamp` and `webhook-signature` are read. */
  readonly headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>
  /** The endpoint's `whsec_…` secret. */
  readonly secret: string
  /** The time to judge the delivery's timestamp at; defaults to the current time (an Invalid Date throws `InvalidOptionError`). */
  readonly now?: Date
}

/** Why a delivery was refused. A closed union: switch on it. */
export type WebhookSignatureErrorCode =
  /** A `webhook-*` header is missing, or the timestamp is not a number. */
  | 'malformed'
  /** The timestamp is more than 5 minutes from now (a replay, or a clock far off). */
  | 'stale'
  /** No signature matches the secret, id, timestamp and body. */
  | 'invalid_signature'
  /** Signed with the secret, but the body is not a Keyturn event. */
  | 'not_an_event'

/** Thrown by `verifyWebhook`: the request is not a genuine, fresh Keyturn delivery. */
export class WebhookSignatureError extends Error {
  readonly code: WebhookSignatureErrorCode

  constructor(code: WebhookSignatureErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'WebhookSignatureError'
    this.code = code
  }
}

/** How far a delivery's timestamp may be from now, either way (Standard Webhooks' tolerance). */
export const webhookToleranceSeconds = 5 * 60

/**
 * Verifies a Keyturn webhook (Standard Webhooks: HMAC-SHA256 over `id.timestamp.body`, timestamps
 * within 5 minutes) and returns the event, or throws a `WebhookSignatureError` whose `code` says
 * why. Pure JavaScript (no Node-only modules): runs in Node, browsers and edge runtimes.
 * Deduplicate on `event.id`: deliveries are at least once.
 *
 * Only the event's envelope is checked (id, type, time, actor `{ type, id }`, data): a server newer
 * than this client may send event types and kinds of actor it does not list, so handle the types
 * you need and ignore the others (a `switch` with a `default`).
 *
 * @example
 * const event = verifyWebhook({ payload: await request.text(), headers: request.headers, secret })
 * if (event.type === 'license.revoked') await revokeAccess(event.data.id)
 */
export function verifyWebhook(options: VerifyWebhookOptions): EventResource {
  const headers: Record<string, string> = {}
  const entries =
    options.headers instanceof Headers ? [...options.headers.entries()] : Object.entries(options.headers)
  for (const [name, value] of entries) {
    if (value !== undefined) {
      headers[name.toLowerCase()] = typeof value === 'string' ? value : value.join(' ')
    }
  }
  const id = headers['webhook-id']
  const timestampText = headers['webhook-timestamp']
  const signatures = headers['webhook-signature']
  if (!id || !timestampText || !signatures) {
    throw new WebhookSignatureError('malformed', 'Missing required headers')
  }
  const timestamp = Number.parseInt(timestampText, 10)
  if (Number.isNaN(timestamp)) {
    throw new WebhookSignatureError('malformed', 'Invalid Signature Headers')
  }
  const now = Math.floor(readNow(options.now) / 1000)
  if (now - timestamp > webhookToleranceSeconds) {
    throw new WebhookSignatureError('stale', 'Message timestamp too old')
  }
  if (timestamp > now + webhookToleranceSeconds) {
    throw new WebhookSignatureError('stale', 'Message timestamp too new')
  }
  // The library's HMAC (what the server signs with); its own verify reads the system clock only.
  let expected: string
  try {
    expected = new Webhook(options.secret).sign(id, new Date(timestamp * 1000), options.payload)
  } catch (error) {
    throw new WebhookSignatureError('invalid_signature', 'The signature cannot be checked', { cause: error })
  }
  const matches = signatures.split(' ').some((signature) => constantTimeEqual(signature, expected))
  if (!matches) {
    throw new WebhookSignatureError('invalid_signature', 'No matching signature found')
  }
  let event: unknown
  try {
    event = JSON.parse(options.payload)
  } catch (error) {
    throw new WebhookSignatureError('not_an_event', 'The payload is signed but is not JSON', { cause: error })
  }
  if (!Check(EventEnvelopeSchema, event)) {
    throw new WebhookSignatureError('not_an_event', 'The payload is signed but is not a Keyturn event')
  }
  return event as EventResource // its envelope checked; its type may be newer than this client
}

/** Compares two strings in time that depends on their lengths only. */
function constantTimeEqual(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  for (let index = 0; index < b.length; index++) {
    difference |= (a.charCodeAt(index % Math.max(a.length, 1)) || 0) ^ b.charCodeAt(index)
  }
  return difference === 0
}
