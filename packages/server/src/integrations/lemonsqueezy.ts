import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { quantityOf } from './integration.js'
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
 * Subscriptions: see subscriptionAction.
 */
export function lemonSqueezyAction(body: unknown): Action {
  const { meta, data } = body as {
    meta?: { event_name?: unknown }
    data?: { id?: unknown; attributes?: Record<string, unknown> }
  }
  const attributes = data?.attributes ?? {}
  if (meta?.event_name === 'order_created') {
    const item = attributes.first_order_item as { variant_id?: unknown; quantity?: unknown } | undefined
    const quantity = quantityOf(item?.quantity)
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
      ...(quantity === undefined ? {} : { quantity }),
      buyer: { email, name: typeof name === 'string' && name.length > 0 ? name.slice(0, 200) : null },
    }
  }
  const event = meta?.event_name
  if (typeof event === 'string' && event.startsWith('subscription_')) {
    return subscriptionAction(event, data?.id, attributes)
  }
  if (
    meta?.event_name === 'order_refunded' &&
    (typeof data?.id === 'string' || typeof data?.id === 'number')
  ) {
    return { kind: 'refund', objectKind: 'order', objectId: String(data.id).slice(0, 64) }
  }
  return { kind: 'ignored', why: `Event ${String(meta?.event_name)} is not acted on.` }
}

/** An id Lemon Squeezy sends as a number or a string. */
function idOf(value: unknown): string | undefined {
  return (typeof value === 'string' && value.length > 0 && value.length <= 64) ||
    (typeof value === 'number' && Number.isSafeInteger(value))
    ? String(value)
    : undefined
}

/** An ISO 8601 date of the payload; undefined when absent or not a date. */
function dateOf(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value.length > 64) {
    return undefined
  }
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/**
 * Subscription events. Their `data` is the subscription (`subscription_created`, `_updated`,
 * `_cancelled`, `_resumed`, `_expired`, ...) or, for payments (`subscription_payment_success`,
 * `_failed`, `_recovered`), the subscription invoice naming it in `attributes.subscription_id`.
 * - created: the purchase of `variant_id` by `user_email`, paid until `renews_at`; also linked to
 *   its `order_id`, so the order's own `order_created` makes no second license.
 * - payment success / recovered: lifts payment grace (the new period arrives with `_updated`);
 *   payment failed: payment grace.
 * - updated / resumed: the plan (`variant_id`); while `active` or `on_trial`, the license runs until
 *   `renews_at`; `cancelled`: it ends at `ends_at`; `expired`: at `ends_at`.
 */
function subscriptionAction(event: string, dataId: unknown, attributes: Record<string, unknown>): Action {
  if (event.startsWith('subscription_payment_')) {
    const subscription = idOf(attributes.subscription_id)
    if (subscription === undefined) {
      return { kind: 'ignored', why: `The ${event} invoice names no subscription_id.` }
    }
    if (event === 'subscription_payment_failed') {
      return { kind: 'subscription', objectKind: 'subscription', objectId: subscription, paymentFailed: {} }
    }
    if (event === 'subscription_payment_success' || event === 'subscription_payment_recovered') {
      return { kind: 'subscription', objectKind: 'subscription', objectId: subscription, paid: {} }
    }
    return { kind: 'ignored', why: `Event ${event} is not acted on.` }
  }
  const id = idOf(dataId)
  if (id === undefined) {
    return { kind: 'ignored', why: `The ${event} subscription has no id.` }
  }
  const variant = idOf(attributes.variant_id)
  const quantity = quantityOf(
    (attributes.first_subscription_item as { quantity?: unknown } | null | undefined)?.quantity,
  )
  const renewsAt = dateOf(attributes.renews_at)
  const endsAt = dateOf(attributes.ends_at)
  if (event === 'subscription_created') {
    const email = attributes.user_email
    const name = attributes.user_name
    if (variant === undefined || typeof email !== 'string' || email.length > 254 || !email.includes('@')) {
      return { kind: 'ignored', why: 'The subscription names no variant or buyer address.' }
    }
    const order = idOf(attributes.order_id)
    return {
      kind: 'purchase',
      objectKind: 'subscription',
      objectId: id,
      alsoLinks: order === undefined ? [] : [{ kind: 'order', id: order }],
      providerItemId: variant,
      buyer: { email, name: typeof name === 'string' && name.length > 0 ? name.slice(0, 200) : null },
      ...(renewsAt === undefined ? {} : { periodEnd: renewsAt }),
      ...(quantity === undefined ? {} : { quantity }),
    }
  }
  const status = attributes.status
  const ended = status === 'cancelled' || status === 'expired' || event === 'subscription_expired'
  const running = status === 'active' || status === 'on_trial'
  return {
    kind: 'subscription',
    objectKind: 'subscription',
    objectId: id,
    ...(variant === undefined ? {} : { providerItemId: variant }),
    ...(quantity === undefined ? {} : { quantity }),
    ...(running && renewsAt !== undefined && event !== 'subscription_expired'
      ? { paid: { paidThrough: renewsAt } }
      : {}),
    ...(ended && (endsAt ?? renewsAt) !== undefined ? { endsAt: endsAt ?? renewsAt } : {}),
  }
}
