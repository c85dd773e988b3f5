import Stripe from 'stripe'
import { quantityOf } from './integration.js'
import type { Action } from './integration-actions.js'

/**
 * The Stripe API version Keyturn reads event payloads in: the one the installed `stripe` SDK is
 * pinned to. The vendor creates the webhook endpoint in Stripe with this version, so payloads keep
 * the shape the handlers read.
 */
export const stripeApiVersion: string = Stripe.API_VERSION

/** Stripe's default: a signature older than five minutes is refused (replays). */
const toleranceSeconds = 300

/** A verified Stripe delivery, or why it was refused. */
export type StripeVerification =
  | {
      readonly ok: true
      readonly eventType: string
      readonly dedupeKey: string
      readonly apiVersion: string | null
      readonly body: unknown
    }
  | { readonly ok: false; readonly problem: 'signature' | 'malformed'; readonly reason: string }

/**
 * Verifies a `Stripe-Signature` header with the SDK's `webhooks.constructEvent` on the raw body, at
 * the server's clock (`now`), and reads the event's id (the dedupe key) and type.
 */
export function verifyStripe(
  rawBody: Buffer,
  header: string | undefined,
  secret: string,
  now: Date,
): StripeVerification {
  if (header === undefined) {
    return { ok: false, problem: 'signature', reason: 'No Stripe-Signature header.' }
  }
  try {
    const event = Stripe.webhooks.constructEvent(
      rawBody,
      header,
      secret,
      toleranceSeconds,
      undefined,
      now.getTime(), // milliseconds: the SDK divides by 1000
    )
    if (typeof event.id !== 'string' || typeof event.type !== 'string') {
      return { ok: false, problem: 'malformed', reason: 'The body is not a Stripe event (no id or type).' }
    }
    return {
      ok: true,
      eventType: event.type,
      dedupeKey: event.id,
      apiVersion: event.api_version ?? null,
      body: JSON.parse(rawBody.toString('utf8')),
    }
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      return { ok: false, problem: 'signature', reason: error.message }
    }
    if (error instanceof SyntaxError) {
      return { ok: false, problem: 'malformed', reason: 'The body is not JSON.' }
    }
    throw error
  }
}

/**
 * What a Stripe event asks for. Subscriptions: see invoiceAction and subscriptionAction; an
 * `invoice_payment.paid` links the invoice's PaymentIntent to the license, for refunds. A paid
 * one-time (`mode: payment`) `checkout.session.completed` is a purchase of the price its
 * Checkout Session names in `metadata.keyturn_price` (the event does not carry the session's line
 * items; the vendor sets this metadata when creating the session) by `customer_details.email`.
 * `charge.refunded` and `charge.dispute.created` refund it, found by the session's PaymentIntent.
 */
export function stripeAction(eventType: string, body: unknown): Action {
  if (eventType === 'charge.refunded' || eventType === 'charge.dispute.created') {
    // A refunded charge, or a chargeback's dispute: both name the PaymentIntent the session paid with.
    const paymentIntent = (body as { data?: { object?: { payment_intent?: unknown } } }).data?.object
      ?.payment_intent
    return typeof paymentIntent === 'string'
      ? { kind: 'refund', objectKind: 'payment_intent', objectId: paymentIntent.slice(0, 255) }
      : { kind: 'ignored', why: `The ${eventType} event names no payment_intent.` }
  }
  const object = (body as { data?: { object?: Record<string, unknown> } }).data?.object ?? {}
  if (eventType === 'invoice.paid' || eventType === 'invoice.payment_failed') {
    return invoiceAction(eventType, object)
  }
  if (eventType === 'invoice_payment.paid') {
    // The payment of an invoice: its PaymentIntent is what a refund or dispute of it names.
    const invoice = boundedId(object.invoice)
    const payment = object.payment as { payment_intent?: unknown } | null | undefined
    const paymentIntent = boundedId(payment?.payment_intent)
    return invoice === undefined || paymentIntent === undefined
      ? { kind: 'ignored', why: 'The invoice payment names no invoice or PaymentIntent.' }
      : {
          kind: 'link',
          objectKind: 'invoice',
          objectId: invoice,
          link: { kind: 'payment_intent', id: paymentIntent },
        }
  }
  if (eventType === 'customer.subscription.updated' || eventType === 'customer.subscription.deleted') {
    return subscriptionAction(eventType, object)
  }
  if (eventType !== 'checkout.session.completed') {
    return { kind: 'ignored', why: `Event ${eventType} is not acted on.` }
  }
  const session = object
  if (session.mode === 'subscription') {
    return {
      kind: 'ignored',
      why: `Checkout Session ${String(session.id)} started a subscription: its first paid invoice (invoice.paid) makes the license.`,
    }
  }
  const details = session.customer_details as { email?: unknown; name?: unknown } | null | undefined
  const metadata = session.metadata as
    | { keyturn_price?: unknown; keyturn_quantity?: unknown }
    | null
    | undefined
  const price = metadata?.keyturn_price
  const quantity = quantityOf(metadata?.keyturn_quantity)
  if (session.payment_status !== 'paid') {
    return { kind: 'ignored', why: `Checkout Session ${String(session.id)} is not paid.` }
  }
  if (
    typeof session.id !== 'string' ||
    typeof price !== 'string' ||
    typeof details?.email !== 'string' ||
    details.email.length > 254 ||
    !details.email.includes('@')
  ) {
    return {
      kind: 'ignored',
      why: 'The Checkout Session names no id, metadata.keyturn_price or buyer address.',
    }
  }
  return {
    kind: 'purchase',
    objectKind: 'checkout_session',
    objectId: session.id.slice(0, 255),
    alsoLinks:
      typeof session.payment_intent === 'string'
        ? [{ kind: 'payment_intent', id: session.payment_intent.slice(0, 255) }]
        : [],
    providerItemId: price.slice(0, 255),
    ...(quantity === undefined ? {} : { quantity }),
    buyer: {
      email: details.email,
      name: typeof details.name === 'string' && details.name.length > 0 ? details.name.slice(0, 200) : null,
    },
  }
}

/** A Stripe timestamp (Unix seconds) as a Date; undefined when it is not one. */
function stripeTime(value: unknown): Date | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value < 253_402_300_800
    ? new Date(value * 1000)
    : undefined
}

function boundedId(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= 255 ? value : undefined
}

/**
 * `invoice.paid` / `invoice.payment_failed` of a subscription's invoice (the invoice names it in
 * `parent.subscription_details.subscription`; each line its price in
 * `pricing.price_details.price` and its service period in `period`). The first invoice
 * (`billing_reason: subscription_create`) is the purchase; a later paid one renews the license to
 * its lines' period end; a failed one starts the payment grace.
 */
function invoiceAction(eventType: string, invoice: Record<string, unknown>): Action {
  const parent = invoice.parent as
    | { subscription_details?: { subscription?: unknown } | null }
    | null
    | undefined
  const subscription = boundedId(parent?.subscription_details?.subscription)
  const invoiceId = boundedId(invoice.id)
  if (subscription === undefined) {
    return {
      kind: 'ignored',
      why: `Invoice ${String(invoice.id)} is not a subscription's; one-time payments arrive as checkout.session.completed.`,
    }
  }
  const lines = ((invoice.lines as { data?: unknown } | undefined)?.data ?? []) as {
    period?: { end?: unknown }
    pricing?: { price_details?: { price?: unknown } } | null
    quantity?: unknown
  }[]
  const periodEnds = (Array.isArray(lines) ? lines : [])
    .map((line) => stripeTime(line?.period?.end))
    .filter((end): end is Date => end !== undefined)
  const periodEnd =
    periodEnds.length === 0 ? undefined : new Date(Math.max(...periodEnds.map((end) => end.getTime())))
  const priced = (Array.isArray(lines) ? lines : []).find(
    (line) => boundedId(line?.pricing?.price_details?.price) !== undefined,
  )
  const price = boundedId(priced?.pricing?.price_details?.price)
  const quantity = quantityOf(priced?.quantity)
  if (eventType === 'invoice.payment_failed') {
    return {
      kind: 'subscription',
      objectKind: 'subscription',
      objectId: subscription,
      paymentFailed: periodEnd === undefined ? {} : { unpaidThrough: periodEnd },
    }
  }
  if (invoice.billing_reason === 'subscription_create') {
    const email = invoice.customer_email
    if (price === undefined || typeof email !== 'string' || email.length > 254 || !email.includes('@')) {
      return { kind: 'ignored', why: `Invoice ${String(invoice.id)} names no price or buyer address.` }
    }
    const name = invoice.customer_name
    return {
      kind: 'purchase',
      objectKind: 'subscription',
      objectId: subscription,
      ...(invoiceId === undefined ? {} : { alsoLinks: [{ kind: 'invoice', id: invoiceId }] }),
      providerItemId: price,
      buyer: { email, name: typeof name === 'string' && name.length > 0 ? name.slice(0, 200) : null },
      ...(periodEnd === undefined ? {} : { periodEnd }),
      ...(quantity === undefined ? {} : { quantity }),
    }
  }
  return {
    kind: 'subscription',
    objectKind: 'subscription',
    objectId: subscription,
    paid: periodEnd === undefined ? {} : { paidThrough: periodEnd },
    ...(invoiceId === undefined ? {} : { alsoLinks: [{ kind: 'invoice', id: invoiceId }] }),
  }
}

/**
 * `customer.subscription.updated` / `.deleted`: the plan is the first item's price; a cancellation
 * (`cancel_at_period_end`, `cancel_at`) or the deletion ends the license at the period's end
 * (`items.data[].current_period_end`), never earlier.
 */
function subscriptionAction(eventType: string, subscription: Record<string, unknown>): Action {
  const id = boundedId(subscription.id)
  if (id === undefined) {
    return { kind: 'ignored', why: `The ${eventType} event names no subscription id.` }
  }
  const items = ((subscription.items as { data?: unknown } | undefined)?.data ?? []) as {
    price?: { id?: unknown }
    current_period_end?: unknown
    quantity?: unknown
  }[]
  const first = Array.isArray(items) ? items[0] : undefined
  const price = boundedId(first?.price?.id)
  const quantity = quantityOf(first?.quantity)
  const periodEnd = stripeTime(first?.current_period_end)
  const ending =
    eventType === 'customer.subscription.deleted' ||
    subscription.cancel_at_period_end === true ||
    stripeTime(subscription.cancel_at) !== undefined
  const endsAt = ending ? (stripeTime(subscription.cancel_at) ?? periodEnd) : undefined
  return {
    kind: 'subscription',
    objectKind: 'subscription',
    objectId: id,
    ...(price === undefined || eventType === 'customer.subscription.deleted'
      ? {}
      : { providerItemId: price }),
    ...(quantity === undefined || eventType === 'customer.subscription.deleted' ? {} : { quantity }),
    ...(endsAt === undefined ? {} : { endsAt }),
  }
}
