import { type WebhookDeliveryId, webhookDisableAfterSeconds, webhookRetrySchedule } from '@keyturn/protocol'
import type { BackgroundJob } from '../core/background-loop.js'
import type { Clock } from '../core/clock.js'
import { decryptText } from '../core/secrets.js'
import { systemActor, type UnitOfWork } from '../core/unit-of-work.js'
import type { ValidationRecording } from '../events/validation-recording.js'
import type { WebhookSender } from './http-webhook-sender.js'
import { type AttemptResult, deliveryLeaseMs } from './webhook-delivery.js'
import { toWebhookEndpointResource } from './webhook-resource.js'
import type { ClaimedDelivery, WebhookStore } from './webhook-store.js'

/** Concurrent delivery loops per process: a slow receiver holds one, the others go on. */
const deliveryLoops = 4
const deliveryIdleMs = 500

/**
 * Webhook delivery as background work of every serving process: `tick` in several loops, each tick
 * bounded (a delivery attempt lasts at most 10 s).
 */
export function deliveryJob(worker: DeliveryWorker): BackgroundJob {
  return {
    name: 'webhook delivery',
    idleMs: deliveryIdleMs,
    loops: deliveryLoops,
    async tick() {
      const done = await worker.tick()
      // Busy (tick again at once) while sending, or while a full batch of events was dispatched.
      // A few new events wait for the next tick: under a stream of writes each tick would
      // otherwise commit a dispatch of a handful of events, a second commit per write.
      return done.attempted > 0 || done.dispatched >= dispatchBatch
    },
  }
}

/** Events turned into deliveries per tick, and deliveries sent per tick: each tick stays bounded. */
export const dispatchBatch = 200
const sendBatch = 25
/** How often each process re-reads whether an endpoint subscribes to validation events. */
const subscriptionRefreshMs = 5_000

export interface TickResult {
  readonly dispatched: number
  readonly attempted: number
  readonly delivered: number
}

/** Counters for /metrics, per process (Prometheus sums them across processes). */
export interface DeliveryCounters {
  delivered: number
  failedAttempts: number
}

/**
 * The webhook delivery worker: every `keyturn serve` process runs `tick` in a loop. A tick turns new
 * events into deliveries, leases due deliveries (no database transaction is held while sending),
 * sends them concurrently and records each outcome; a failed attempt is retried on the published
 * schedule, and an endpoint whose attempts have all failed for 5 days is disabled.
 */
export class DeliveryWorker {
  readonly #webhooks: WebhookStore
  readonly #storage: UnitOfWork<{ readonly webhooks: WebhookStore }>
  readonly #sender: WebhookSender
  readonly #clock: Clock
  readonly #secretEncryption: Buffer
  readonly #validationRecording: ValidationRecording
  readonly #random: () => number
  readonly #leaseMs: number
  readonly counters: DeliveryCounters = { delivered: 0, failedAttempts: 0 }
  /** Deliveries this process's loops are sending now: never claimed again by this process meanwhile. */
  readonly #sending = new Set<WebhookDeliveryId>()
  #subscriptionReadAt: number | undefined

  constructor(deps: {
    readonly webhooks: WebhookStore
    readonly storage: UnitOfWork<{ readonly webhooks: WebhookStore }>
    readonly sender: WebhookSender
    readonly clock: Clock
    readonly secretEncryption: Buffer
    readonly validationRecording: ValidationRecording
    /** Jitter source, 0 ≤ x < 1. */
    readonly random?: () => number
    /** How long a claim holds (KEYTURN_WEBHOOK_LEASE_SECONDS); default deliveryLeaseMs. */
    readonly leaseMs?: number
  }) {
    this.#webhooks = deps.webhooks
    this.#storage = deps.storage
    this.#sender = deps.sender
    this.#clock = deps.clock
    this.#secretEncryption = deps.secretEncryption
    this.#validationRecording = deps.validationRecording
    this.#random = deps.random ?? Math.random
    this.#leaseMs = deps.leaseMs ?? deliveryLeaseMs
  }

  async tick(): Promise<TickResult> {
    const now = this.#clock.now()
    if (
      this.#subscriptionReadAt === undefined ||
      now.getTime() - this.#subscriptionReadAt >= subscriptionRefreshMs
    ) {
      await this.refreshSubscriptions()
    }
    const dispatched = await this.#webhooks.dispatch(now, dispatchBatch)
    // A slow attempt may outlive its lease: another process may then send it again (at least once),
    // but this process does not send twice what it is still sending.
    const claimed = await this.#webhooks.claimDue(now, new Date(now.getTime() + this.#leaseMs), sendBatch, [
      ...this.#sending,
    ])
    const outcomes = await Promise.all(
      claimed.map(async (delivery) => {
        this.#sending.add(delivery.id)
        try {
          return await this.#attempt(delivery)
        } finally {
          this.#sending.delete(delivery.id)
        }
      }),
    )
    return { dispatched, attempted: claimed.length, delivered: outcomes.filter(Boolean).length }
  }

  /** For /metrics: the shared backlog. */
  pendingBacklog(): Promise<{ readonly count: number; readonly oldest: Date | null }> {
    return this.#webhooks.pendingBacklog()
  }

  /** For /metrics: events recorded and not yet dispatched into deliveries. */
  undispatchedEvents(): Promise<number> {
    return this.#webhooks.undispatchedEvents()
  }

  now(): Date {
    return this.#clock.now()
  }

  /** Re-reads whether any enabled endpoint wants validation events (so validation records them). */
  async refreshSubscriptions(): Promise<void> {
    this.#subscriptionReadAt = this.#clock.now().getTime()
    this.#validationRecording.setSubscribed(
      await this.#webhooks.isAnySubscribedTo(['license.validated', 'license.validation_failed']),
    )
  }

  async #attempt(delivery: ClaimedDelivery): Promise<boolean> {
    const result: AttemptResult = await this.#sender.send({
      url: delivery.endpoint.url,
      id: delivery.eventId,
      timestamp: this.#clock.now(),
      body: delivery.payload,
      secret: decryptText(this.#secretEncryption, delivery.endpoint.secretEncrypted),
    })
    const at = this.#clock.now()
    const isDelivered = result.kind === 'answered' && result.status >= 200 && result.status < 300
    const recorded = await this.#webhooks.recordAttempt(
      delivery,
      at,
      result,
      isDelivered ? null : this.#nextAttempt(delivery.attempts, at),
    )
    if (recorded === undefined) {
      return false // the lease ran out and another process took the delivery over: it records it
    }
    if (isDelivered) {
      this.counters.delivered++
      return true
    }
    this.counters.failedAttempts++
    const failingSince = recorded.failingSince
    if (failingSince != null && at.getTime() - failingSince.getTime() >= webhookDisableAfterSeconds * 1000) {
      await this.#disable(delivery, at)
    }
    return false
  }

  /** After attempt number `attemptsBefore + 1` failed: when to try again (±10% jitter), or null. */
  #nextAttempt(attemptsBefore: number, at: Date): Date | null {
    const delay = webhookRetrySchedule[attemptsBefore]
    if (delay === undefined) {
      return null
    }
    const jitter = 0.9 + 0.2 * this.#random()
    return new Date(at.getTime() + Math.round(delay * 1000 * jitter))
  }

  async #disable(delivery: ClaimedDelivery, at: Date): Promise<void> {
    await this.#storage.write(systemActor('webhook-deliveries'), async ({ webhooks, events }) => {
      const endpoint = await webhooks.disableEndpoint(delivery.endpoint.id, at)
      if (endpoint !== undefined) {
        events.record('webhook_endpoint.disabled', endpoint.productId, toWebhookEndpointResource(endpoint))
      }
    })
    await this.refreshSubscriptions()
  }
}
