import { createHmac, timingSafeEqual } from 'node:crypto'
import { quantityOf } from './integration.js'
import type { Action } from './integration-actions.js'

/**
 * Paddle Billing webhooks (developer.paddle.com/webhooks/signature-verification): the
 * `Paddle-Signature` header is `ts=<unix seconds>;h1=<hex>`, with several `h1` while a secret is
 * rotated; `h1` is the HMAC-SHA256 of `<ts>:<raw body>` under the notification destination's secret
 * key. Checked here by that algorithm at the server's clock (the SDK reads the system clock). The
 * SDK refuses a timestamp more than 5 seconds away; Keyturn allows 5 minutes, as for Stripe: a
 * delivery held up by the network or a provider retry is not lost, and a replay inside the window
 * does nothing, since each event id is recorded once.
 */
const toleranceSeconds = 300

export type PaddleVerification =
  | { readonly ok: true; readonly eventType: string; readonly dedupeKey: string; readonly body: unknown }
  | { readonly ok: false; readonly problem: 'signature' | 'malformed'; readonly reason: string }

export function verifyPaddle(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  now: Date,
): PaddleVerification {
  const parts = new Map<string, string[]>()
  for (const part of (header ?? '').split(';')) {
    const [name, value] = part.split('=', 2)
    if (name !== undefined && value !== undefined) {
      parts.set(name.trim(), [...(parts.get(name.trim()) ?? []), value.trim()])
    }
  }
  const ts = parts.get('ts')?.[0]
  const signatures = parts.get('h1') ?? []
  if (ts === undefined || !/^\d{1,12}$/.test(ts) || signatures.length === 0) {
    return { ok: false, problem: 'signature', reason: 'No valid Paddle-Signature header (ts=…;h1=…).' }
  }
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(ts)) > toleranceSeconds) {
    return {
      ok: false,
      problem: 'signature',
      reason: 'The signature’s timestamp is more than 5 minutes from the server’s clock.',
    }
  }
  const expected = createHmac('sha256', secret).update(`${ts}:`).update(rawBody).digest()
  const matches = signatures.some(
    (signature) =>
      /^[0-9a-f]{64}$/i.test(signature) && timingSafeEqual(expected, Buffer.from(signature, 'hex')),
  )
  if (!matches) {
    return { ok: false, problem: 'signature', reason: 'No h1 signature matches the body.' }
  }
  let body: unknown
  try {
    body = JSON.parse(rawBody.toString('utf8'))
  } catch {
    return { ok: false, problem: 'malformed', reason: 'The body is not JSON.' }
  }
  const { event_id: eventId, event_type: eventType } = (body ?? {}) as {
    event_id?: unknown
    event_type?: unknown
  }
  if (
    typeof eventId !== 'string' ||
    typeof eventType !== 'string' ||
    eventId.length > 100 ||
    eventType.length > 100
  ) {
    return {
      ok: false,
      problem: 'malformed',
      reason: 'The body is not a Paddle event (no event_id or event_type).',
    }
  }
  return { ok: true, eventType, dedupeKey: eventId, body }
}

function idOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= 100 ? value : undefined
}

function dateOf(value: unknown): Date | undefined {
  if (typeof value !== 'string' || value.length > 64) {
    return undefined
  }
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/** The first item's quantity (`items[].quantity`). */
function firstQuantity(items: unknown): number | undefined {
  return Array.isArray(items)
    ? quantityOf((items[0] as { quantity?: unknown } | undefined)?.quantity)
    : undefined
}

/** The first item's price id (`items[].price.id`) of a transaction or subscription. */
function firstPrice(items: unknown): string | undefined {
  return Array.isArray(items)
    ? idOf((items[0] as { price?: { id?: unknown } } | undefined)?.price?.id)
    : undefined
}

/**
 * What a Paddle Billing event asks for (developer.paddle.com/webhooks):
 * - `customer.created` / `.updated`: the customer's address (transactions name only `customer_id`);
 * - `transaction.completed`: a purchase of the first item's price (`items[].price.id`) by the
 *   transaction's customer, linked to the transaction and its `subscription_id`; for a
 *   subscription already linked, the renewal to `billing_period.ends_at`;
 * - `subscription.updated` / `.activated` / `.resumed` / `.canceled` / `.past_due`: the plan, a
 *   scheduled cancellation (`scheduled_change.action: cancel`) ending the license at its
 *   `effective_at`, `past_due` starting the payment grace; `canceled` keeps the end of the period
 *   paid for;
 * - `adjustment.created` / `.updated`: an approved refund or a chargeback of a transaction revokes
 *   its license (per `onRefund`).
 */
export function paddleAction(eventType: string, body: unknown): Action {
  const data = ((body as { data?: unknown } | null)?.data ?? {}) as Record<string, unknown>
  if (eventType === 'customer.created' || eventType === 'customer.updated') {
    const id = idOf(data.id)
    const email = data.email
    if (id === undefined || typeof email !== 'string' || email.length > 254 || !email.includes('@')) {
      return { kind: 'ignored', why: 'The customer names no id or address.' }
    }
    const name = data.name
    return {
      kind: 'customer',
      providerCustomerId: id,
      email,
      name: typeof name === 'string' && name.length > 0 ? name.slice(0, 200) : null,
    }
  }
  if (eventType === 'transaction.completed') {
    const id = idOf(data.id)
    const customer = idOf(data.customer_id)
    const price = firstPrice(data.items)
    if (id === undefined || customer === undefined || price === undefined) {
      return { kind: 'ignored', why: 'The transaction names no id, customer_id or price.' }
    }
    const subscription = idOf(data.subscription_id)
    const quantity = firstQuantity(data.items)
    const periodEnd = dateOf((data.billing_period as { ends_at?: unknown } | null | undefined)?.ends_at)
    return subscription === undefined
      ? {
          kind: 'purchase',
          objectKind: 'transaction',
          objectId: id,
          providerItemId: price,
          buyer: { providerCustomerId: customer },
          ...(quantity === undefined ? {} : { quantity }),
        }
      : {
          kind: 'purchase',
          objectKind: 'subscription',
          objectId: subscription,
          alsoLinks: [{ kind: 'transaction', id }],
          providerItemId: price,
          buyer: { providerCustomerId: customer },
          ...(periodEnd === undefined ? {} : { periodEnd }),
          ...(quantity === undefined ? {} : { quantity }),
        }
  }
  if (eventType.startsWith('subscription.') && eventType !== 'subscription.created') {
    const id = idOf(data.id)
    if (id === undefined) {
      return { kind: 'ignored', why: `The ${eventType} subscription has no id.` }
    }
    const price = firstPrice(data.items)
    const quantity = firstQuantity(data.items)
    const periodEnd = dateOf(
      (data.current_billing_period as { ends_at?: unknown } | null | undefined)?.ends_at,
    )
    const scheduled = data.scheduled_change as { action?: unknown; effective_at?: unknown } | null | undefined
    const endsAt = scheduled?.action === 'cancel' ? dateOf(scheduled.effective_at) : undefined
    return {
      kind: 'subscription',
      objectKind: 'subscription',
      objectId: id,
      ...(price === undefined || data.status === 'canceled' ? {} : { providerItemId: price }),
      ...(quantity === undefined || data.status === 'canceled' ? {} : { quantity }),
      ...(data.status === 'past_due'
        ? { paymentFailed: periodEnd === undefined ? {} : { unpaidThrough: periodEnd } }
        : {}),
      ...(endsAt === undefined ? {} : { endsAt }),
    }
  }
  if (eventType === 'adjustment.created' || eventType === 'adjustment.updated') {
    const transaction = idOf(data.transaction_id)
    const action = data.action
    const refunded = (action === 'refund' && data.status === 'approved') || action === 'chargeback'
    if (!refunded || transaction === undefined) {
      return {
        kind: 'ignored',
        why: `Adjustment ${String(data.id)} (${String(action)}, ${String(data.status)}) is no approved refund or chargeback.`,
      }
    }
    return { kind: 'refund', objectKind: 'transaction', objectId: transaction }
  }
  return { kind: 'ignored', why: `Event ${eventType} is not acted on.` }
}
