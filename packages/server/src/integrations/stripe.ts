import Stripe from 'stripe'
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
 * What a Stripe event asks for. A paid `checkout.session.completed` is a purchase of the price its
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
  if (eventType !== 'checkout.session.completed') {
    return { kind: 'ignored', why: `Event ${eventType} is not acted on.` }
  }
  const session = (body as { data?: { object?: Record<string, unknown> } }).data?.object ?? {}
  const details = session.customer_details as { email?: unknown; name?: unknown } | null | undefined
  const price = (session.metadata as { keyturn_price?: unknown } | null | undefined)?.keyturn_price
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
    email: details.email,
    name: typeof details.name === 'string' && details.name.length > 0 ? details.name.slice(0, 200) : null,
  }
}
