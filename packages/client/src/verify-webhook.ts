import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { Check } from 'typebox/value'
import { type EventResource, EventResourceSchema } from '../../protocol/src/index.js'

export interface VerifyWebhookOptions {
  /** The raw request body, exactly as received (not re-serialised JSON). */
  readonly payload: string
  /** The request's headers: `webhook-id`, `webhook-timestamp` and `webhook-signature` are read. */
  readonly headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>
  /** The endpoint's `whsec_…` secret. */
  readonly secret: string
}

/** Thrown by `verifyWebhook`: the request is not a genuine, fresh Keyturn delivery. */
export class WebhookSignatureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'WebhookSignatureError'
  }
}

/**
 * Verifies a Keyturn webhook (Standard Webhooks: HMAC-SHA256 over `id.timestamp.body`, timestamps
 * within 5 minutes) and returns the event, or throws a `WebhookSignatureError`. Pure JavaScript
 * (no Node-only modules): runs in Node, browsers and edge runtimes. Deduplicate on `event.id`:
 * deliveries are at least once.
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
  let event: unknown
  try {
    event = new Webhook(options.secret).verify(options.payload, headers)
  } catch (error) {
    const reason =
      error instanceof WebhookVerificationError ? error.message : 'The signature cannot be checked'
    throw new WebhookSignatureError(reason, { cause: error })
  }
  if (!Check(EventResourceSchema, event)) {
    throw new WebhookSignatureError('The payload is signed but is not a Keyturn event')
  }
  return event
}
