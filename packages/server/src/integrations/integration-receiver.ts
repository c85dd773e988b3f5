import type { IntegrationId } from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { decryptText } from '../core/secrets.js'
import type { Integration } from './integration.js'
import { type Action, type ActionStorage, purchase, refund, type Settled } from './integration-actions.js'
import { integrationNotFound } from './integration-service.js'
import type { IntegrationStore } from './integration-store.js'
import { lemonSqueezyAction, lemonSqueezySignatureValid, readLemonSqueezyDelivery } from './lemonsqueezy.js'
import { verifyPaddle } from './paddle.js'
import { stripeAction, stripeApiVersion, verifyStripe } from './stripe.js'

export interface ReceiverDeps {
  readonly integrations: IntegrationStore
  readonly clock: Clock
  readonly secretEncryption: Buffer
  /** Records an event and carries out what it asks for in one transaction. */
  readonly actions: ActionStorage
}

/** What the provider is answered: 200 either way, `duplicate` for a redelivery. */
export interface Receipt {
  readonly received: true
  readonly duplicate: boolean
}

/**
 * Receives a provider's webhook: verifies its signature on the raw body, then records the event
 * once per dedupe key, doing what it asks for in the same transaction (integration-actions.ts).
 */
export class IntegrationReceiver {
  readonly #integrations: IntegrationStore
  readonly #clock: Clock
  readonly #secretEncryption: Buffer
  readonly #actions: ActionStorage

  constructor(deps: ReceiverDeps) {
    this.#integrations = deps.integrations
    this.#clock = deps.clock
    this.#secretEncryption = deps.secretEncryption
    this.#actions = deps.actions
  }

  async receive(
    id: IntegrationId,
    rawBody: Buffer,
    headers: Record<string, string | undefined>,
  ): Promise<Receipt> {
    const stored = await this.#integrations.find(id)
    if (stored === undefined) {
      throw integrationNotFound(id)
    }
    const { integration } = stored
    const secret = decryptText(this.#secretEncryption, stored.signingSecretEncrypted)
    const now = this.#clock.now()
    if (integration.provider === 'stripe') {
      const verified = verifyStripe(rawBody, headers['stripe-signature'], secret, now)
      if (!verified.ok) {
        throw verified.problem === 'signature'
          ? new DomainError('provider_signature_invalid', verified.reason)
          : new DomainError('bad_request', verified.reason)
      }
      const isNew = await this.#act(
        integration,
        { eventType: verified.eventType, dedupeKey: verified.dedupeKey },
        stripeAction(verified.eventType, verified.body),
        verified.apiVersion === stripeApiVersion
          ? ''
          : ` Its API version ${verified.apiVersion} is not the pinned ${stripeApiVersion}.`,
        now,
      )
      return { received: true, duplicate: !isNew }
    }
    if (integration.provider === 'paddle') {
      const verified = verifyPaddle(rawBody, headers['paddle-signature'], secret, now)
      if (!verified.ok) {
        throw verified.problem === 'signature'
          ? new DomainError('provider_signature_invalid', verified.reason)
          : new DomainError('bad_request', verified.reason)
      }
      const isNew = await this.#integrations.recordReceived(id, {
        eventType: verified.eventType,
        dedupeKey: verified.dedupeKey,
        status: 'pending',
        outcome: 'Received; waiting to be handled.',
        payload: verified.body,
        receivedAt: now,
      })
      return { received: true, duplicate: !isNew }
    }
    if (!lemonSqueezySignatureValid(rawBody, headers['x-signature'], secret)) {
      throw new DomainError('provider_signature_invalid', 'The X-Signature header does not match the body.')
    }
    let body: unknown
    try {
      body = JSON.parse(rawBody.toString('utf8'))
    } catch {
      throw new DomainError('bad_request', 'The body is not JSON.')
    }
    const delivery = readLemonSqueezyDelivery(rawBody, body)
    if (delivery === undefined) {
      throw new DomainError('bad_request', 'The body is not a Lemon Squeezy event (no meta.event_name).')
    }
    const isNew = await this.#act(integration, delivery, lemonSqueezyAction(body), '', now)
    return { received: true, duplicate: !isNew }
  }

  /**
   * Records the event once and, the first time, does what it asks for, in one transaction: a
   * redelivery (false) waits for the first and does nothing; a failure leaves nothing recorded, so
   * the provider's retry finds it new.
   */
  async #act(
    integration: Integration,
    delivery: { readonly eventType: string; readonly dedupeKey: string },
    action: Action,
    note: string,
    now: Date,
  ): Promise<boolean> {
    return this.#actions.write('system', async (stores) => {
      const recorded = await stores.integrations.recordReceived(integration.id, {
        ...delivery,
        status: 'processed',
        outcome: '',
        payload: null,
        receivedAt: now,
      })
      if (!recorded) {
        return false
      }
      const settled: Settled =
        action.kind === 'purchase'
          ? await purchase(stores, integration, action, now)
          : action.kind === 'refund'
            ? await refund(stores, integration, action, now)
            : { status: 'ignored', outcome: action.why }
      await stores.integrations.settle(
        integration.id,
        delivery.dedupeKey,
        settled.status,
        settled.outcome + note,
        now,
      )
      return true
    })
  }
}
