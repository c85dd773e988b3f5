import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { Action } from './integration-actions.js'

/**
 * Lemon Squeezy webhooks: the `X-Signature` header is the hex HMAC-SHA256 of the raw body under the
 * webhook's signing secret (docs.lemonsqueezy.com/help/webhooks/signing-requests). Lemon Squeezy sends
 * no event id and no timestamp, so a delivery is recognised by `(meta.event_name, data.id,
 * data.attributes.updated_at)`, or by the body's SHA-256 when the body lacks `updated_at`.
 */
export function lemonSqueezySignatureValid(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
): boolean {
  if (header === undefined || !/^[0-9a-f]{64}$/i.test(header)) {
    return false
  }
  const expected = createHmac('sha256', secret).update(rawBody).digest()
  return timingSafeEqual(expected, Buffer.from(header, 'hex'))
}

/** A verified Lemon Squeezy delivery: what it is and the key that recognises a redelivery. */
export interface LemonSqueezyDelivery {
  readonly eventType: string
  readonly dedupeKey: string
}

/** Reads what dedupe needs from a verified body; undefined when it is not a Lemon Squeezy event. */
export function readLemonSqueezyDelivery(rawBody: Buffer, body: unknown): LemonSqueezyDelivery | undefined {
  if (typeof body !== 'object' || body === null) {
    return undefined
  }
  const { meta, data } = body as {
    meta?: { event_name?: unknown }
    data?: { id?: unknown; attributes?: unknown }
  }
  const eventType = meta?.event_name
  if (typeof eventType !== 'string' || eventType.length === 0 || eventType.length > 100) {
    return undefined
  }
  const id = data?.id
  const updatedAt = (data?.attributes as { updated_at?: unknown } | undefined)?.updated_at
  const dedupeKey =
    (typeof id === 'string' || typeof id === 'number') &&
    typeof updatedAt === 'string' &&
    updatedAt.length <= 64
      ? `${eventType}:${String(id).slice(0, 64)}:${updatedAt}`
      : `sha256:${createHash('sha256').update(rawBody).digest('hex')}`
  return { eventType, dedupeKey }
}

/**
 * What a Lemon Squeezy event asks for. `order_created` is a purchase of its first item's variant
 * (`data.attributes.first_order_item.variant_id`) by `user_email`; `order_refunded` refunds the order.
 */
export function lemonSqueezyAction(body: unknown): Action {
  const { meta, data } = body as {
    meta?: { event_name?: unknown }
    data?: { id?: unknown; attributes?: Record<string, unknown> }
  }
  const attributes = data?.attributes ?? {}
  if (meta?.event_name === 'order_created') {
    const item = attributes.first_order_item as { variant_id?: unknown } | undefined
    const email = attributes.user_email
    const name = attributes.user_name
    if (
      (typeof data?.id !== 'string' && typeof data?.id !== 'number') ||
      (typeof item?.variant_id !== 'string' && typeof item?.variant_id !== 'number') ||
      typeof email !== 'string' ||
      email.length > 254 ||
      !email.includes('@')
    ) {
      return { kind: 'ignored', why: 'The order names no id, variant or buyer address.' }
    }
    return {
      kind: 'purchase',
      objectKind: 'order',
      objectId: String(data.id).slice(0, 64),
      providerItemId: String(item.variant_id),
      email,
      name: typeof name === 'string' && name.length > 0 ? name.slice(0, 200) : null,
    }
  }
  if (
    meta?.event_name === 'order_refunded' &&
    (typeof data?.id === 'string' || typeof data?.id === 'number')
  ) {
    return { kind: 'refund', objectKind: 'order', objectId: String(data.id).slice(0, 64) }
  }
  return { kind: 'ignored', why: `Event ${String(meta?.event_name)} is not acted on.` }
}
