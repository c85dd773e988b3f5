import Stripe from 'stripe'

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
