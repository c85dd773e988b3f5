import type { IntegrationId, IntegrationProvider } from '@keyturn/protocol'
import { type ActivityCounts, CountsAfterCommit } from '../core/activity-counts.js'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { decryptText } from '../core/secrets.js'
import type { Integration } from './integration.js'
import {
  type Action,
  type ActionContext,
  type ActionStorage,
  carryOut,
  type Settled,
} from './integration-actions.js'
import { integrationNotFound } from './integration-service.js'
import type { IntegrationStore } from './integration-store.js'
import { lemonSqueezyAction, lemonSqueezySignatureValid, readLemonSqueezyDelivery } from './lemonsqueezy.js'
import { paddleAction, verifyPaddle } from './paddle.js'
import { stripeAction, stripeApiVersion, verifyStripe } from './stripe.js'

export interface ReceiverDeps {
  readonly integrations: IntegrationStore
  readonly clock: Clock
  readonly secretEncryption: Buffer
  /** Records an event and carries out what it asks for in one transaction. */
  readonly actions: ActionStorage
  /** The daily statistics: what an action did, counted once its transaction committed. */
  readonly counts: ActivityCounts
}

/** What the provider is answered: 200 either way, `duplicate` for a redelivery. */
export interface Receipt {
  readonly received: true
  readonly duplicate: boolean
}

/** What a verified event of `provider` asks for. */
export function actionFor(provider: IntegrationProvider, eventType: string, body: unknown): Action {
  return provider === 'stripe'
    ? stripeAction(eventType, body)
    : provider === 'paddle'
      ? paddleAction(eventType, body)
      : lemonSqueezyAction(body)
}

/**
 * When a pending event is tried again: a minute after the first attempt, doubling up to six hours
 * between attempts; after three days it is given up (`failed`).
 */
export const pendingRetry = {
  firstDelayMs: 60_000,
  maxDelayMs: 6 * 3_600_000,
  giveUpAfterMs: 3 * 86_400_000,
} as const

/** The next attempt after `attempts` tries, or undefined once the event is to be given up. */
export function nextAttemptAt(receivedAt: Date, attempts: number, now: Date): Date | undefined {
  if (now.getTime() - receivedAt.getTime() >= pendingRetry.giveUpAfterMs) {
    return undefined
  }
  const delay = Math.min(pendingRetry.firstDelayMs * 2 ** Math.min(attempts - 1, 20), pendingRetry.maxDelayMs)
  return new Date(now.getTime() + delay)
}

/**
 * Carries out `action` for a recorded event and settles it, in the caller's transaction: what it did,
 * or pending with its next attempt (failed once the retries are given up).
 */
export async function actAndSettle(
  stores: ActionContext,
  integration: Integration,
  dedupeKey: string,
  action: Action,
  attempt: { readonly attempts: number; readonly receivedAt: Date },
  note: string,
  now: Date,
): Promise<Settled> {
  const settled = await carryOut(stores, integration, action, now)
  if (settled.status !== 'pending') {
    await stores.integrations.settle(integration.id, dedupeKey, settled.status, settled.outcome + note, now)
    return settled
  }
  const next = nextAttemptAt(attempt.receivedAt, attempt.attempts, now)
  if (next === undefined) {
    const given = {
      status: 'failed',
      outcome: `Given up after ${attempt.attempts} attempts: ${settled.outcome}`,
    } as const
    await stores.integrations.settle(integration.id, dedupeKey, given.status, given.outcome, now)
    return given
  }
  await stores.integrations.settle(
    integration.id,
    dedupeKey,
    'pending',
    `${settled.outcome} Attempt ${attempt.attempts}; next at ${next.toISOString()}.${note}`,
    now,
    next,
  )
  return settled
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
  readonly #counts: ActivityCounts

  constructor(deps: ReceiverDeps) {
    this.#integrations = deps.integrations
    this.#clock = deps.clock
    this.#secretEncryption = deps.secretEncryption
    this.#actions = deps.actions
    this.#counts = deps.counts
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
    const delivery = this.#verify(integration.provider, rawBody, headers, secret, now)
    const isNew = await this.#act(integration, delivery, now)
    return { received: true, duplicate: !isNew }
  }

  #verify(
    provider: IntegrationProvider,
    rawBody: Buffer,
    headers: Record<string, string | undefined>,
    secret: string,
    now: Date,
  ): {
    readonly eventType: string
    readonly dedupeKey: string
    readonly body: unknown
    readonly note: string
  } {
    if (provider === 'stripe' || provider === 'paddle') {
      const verified =
        provider === 'stripe'
          ? verifyStripe(rawBody, headers['stripe-signature'], secret, now)
          : verifyPaddle(rawBody, headers['paddle-signature'], secret, now)
      if (!verified.ok) {
        throw verified.problem === 'signature'
          ? new DomainError('provider_signature_invalid', verified.reason)
          : new DomainError('bad_request', verified.reason)
      }
      const note =
        'apiVersion' in verified && verified.apiVersion !== stripeApiVersion
          ? ` Its API version ${verified.apiVersion} is not the pinned ${stripeApiVersion}.`
          : ''
      return { eventType: verified.eventType, dedupeKey: verified.dedupeKey, body: verified.body, note }
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
    return { ...delivery, body, note: '' }
  }

  /**
   * Records the event once and, the first time, does what it asks for, in one transaction: a
   * redelivery (false) waits for the first and does nothing; a failure leaves nothing recorded, so
   * the provider's retry finds it new. An event that cannot be acted on yet stays pending with its
   * payload for the retry job (IntegrationRetries).
   */
  async #act(
    integration: Integration,
    delivery: {
      readonly eventType: string
      readonly dedupeKey: string
      readonly body: unknown
      readonly note: string
    },
    now: Date,
  ): Promise<boolean> {
    const action = actionFor(integration.provider, delivery.eventType, delivery.body)
    let counted = new CountsAfterCommit()
    const isNew = await this.#actions.write({ type: 'integration', id: integration.id }, async (stores) => {
      counted = new CountsAfterCommit()
      const recorded = await stores.integrations.recordReceived(integration.id, {
        eventType: delivery.eventType,
        dedupeKey: delivery.dedupeKey,
        status: 'pending',
        outcome: '',
        payload: delivery.body,
        receivedAt: now,
      })
      if (!recorded) {
        return false
      }
      await actAndSettle(
        { ...stores, counts: counted },
        integration,
        delivery.dedupeKey,
        action,
        { attempts: 1, receivedAt: now },
        delivery.note,
        now,
      )
      return true
    })
    counted.committed(this.#counts)
    return isNew
  }
}
