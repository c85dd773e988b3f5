import { randomBytes } from 'node:crypto'
import { type EventType, eventTypeMatches, type ProductId, type WebhookEndpointId } from '@keyturn/protocol'
import { InvalidInputError } from '../core/errors.js'

export interface WebhookEndpoint {
  readonly id: WebhookEndpointId
  readonly url: string
  readonly description: string | null
  readonly eventTypes: readonly string[]
  /** null: every product's events and the global ones. */
  readonly productId: ProductId | null
  readonly disabledAt: Date | null
  /** Since when every attempt has failed; null after a success. */
  readonly failingSince: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** What matching needs to know of an event. */
export interface EventHeader {
  readonly id: string
  readonly type: EventType
  readonly productId: ProductId | null
  readonly occurredAt: Date
  readonly data: Record<string, unknown>
}

/**
 * Whether an event goes to an endpoint: enabled, subscribed to the type, within its product scope,
 * and not older than the endpoint. A `webhook_endpoint.test` event goes only to the endpoint it names.
 */
export function endpointWants(endpoint: WebhookEndpoint, event: EventHeader): boolean {
  if (endpoint.disabledAt !== null || event.occurredAt < endpoint.createdAt) {
    return false
  }
  if (event.type === 'webhook_endpoint.test') {
    return event.data.id === endpoint.id
  }
  if (endpoint.productId !== null && endpoint.productId !== event.productId) {
    return false
  }
  return endpoint.eventTypes.some((pattern) => eventTypeMatches(pattern, event.type))
}

/** `whsec_` + base64 of 32 random bytes: the Standard Webhooks secret format. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** A URL the endpoint may have: http(s), no credentials; http only when allowed. */
export function checkWebhookUrl(value: string, allowHttp: boolean): void {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new InvalidInputError('#/url', 'url must be an absolute URL.')
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw new InvalidInputError(
      '#/url',
      allowHttp
        ? 'url must be http:// or https://.'
        : 'url must be https:// (http:// needs KEYTURN_WEBHOOK_ALLOW_HTTP=true).',
    )
  }
  if (url.username !== '' || url.password !== '') {
    throw new InvalidInputError(
      '#/url',
      'url must not carry credentials; use the signature to authenticate deliveries.',
    )
  }
}
