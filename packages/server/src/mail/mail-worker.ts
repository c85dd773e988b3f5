import type { BackgroundJob } from '../core/background-loop.js'
import type { Clock } from '../core/clock.js'
import type { ClaimedMail, KyselyMailOutbox } from './kysely-mail-outbox.js'
import type { MailSender } from './smtp-mail-sender.js'

/** Seconds to wait after failed attempt n (1-based index n-1); after the last one the message is given up. */
export const mailRetrySchedule = [30, 300, 1_800, 7_200, 21_600] as const
/** How long a claim holds: longer than an attempt can last (three 10 s SMTP timeouts). */
export const mailLeaseMs = 60_000
const sendBatch = 10

/** Counters for /metrics, per process. */
export interface MailCounters {
  sent: number
  failedAttempts: number
}

/**
 * Sends queued mail: leases due messages (so two processes never send the same one while the
 * lease holds), sends each over SMTP outside any transaction, and records the outcome. A refused or
 * unreachable send is retried on `mailRetrySchedule` (±10% jitter), then given up.
 */
export class MailWorker {
  readonly #outbox: KyselyMailOutbox
  readonly #sender: MailSender
  readonly #clock: Clock
  readonly #random: () => number
  readonly counters: MailCounters = { sent: 0, failedAttempts: 0 }

  constructor(deps: {
    readonly outbox: KyselyMailOutbox
    readonly sender: MailSender
    readonly clock: Clock
    readonly random?: () => number
  }) {
    this.#outbox = deps.outbox
    this.#sender = deps.sender
    this.#clock = deps.clock
    this.#random = deps.random ?? Math.random
  }

  /** One bounded step: how many messages were attempted. */
  async tick(): Promise<number> {
    const now = this.#clock.now()
    const claimed = await this.#outbox.claimDue(now, new Date(now.getTime() + mailLeaseMs), sendBatch)
    await Promise.all(claimed.map((mail) => this.#attempt(mail)))
    return claimed.length
  }

  backlog(): Promise<number> {
    return this.#outbox.backlog()
  }

  async #attempt(mail: ClaimedMail): Promise<void> {
    try {
      await this.#sender.send(mail.message)
    } catch (error) {
      const at = this.#clock.now()
      const delay = mailRetrySchedule[mail.attempts]
      const next =
        delay === undefined
          ? null
          : new Date(at.getTime() + Math.round(delay * 1000 * (0.9 + 0.2 * this.#random())))
      // Only the SMTP answer is kept (never the message): e.g. "550 mailbox unavailable".
      const reason = error instanceof Error ? error.message : String(error)
      await this.#outbox.recordFailure(mail, at, reason, next)
      this.counters.failedAttempts++
      return
    }
    if (await this.#outbox.recordSent(mail, this.#clock.now())) {
      this.counters.sent++
    }
  }
}

/** Mail sending as background work of every serving process. */
export function mailJob(worker: MailWorker): BackgroundJob {
  return {
    name: 'mail delivery',
    idleMs: 1_000,
    async tick() {
      return (await worker.tick()) > 0
    },
  }
}
