import type { BackgroundJob } from '../core/background-loop.js'
import type { Clock } from '../core/clock.js'
import { newEventId } from '../core/ids.js'
import type { Event } from '../core/unit-of-work.js'
import type { License } from '../licenses/license.js'
import { viewAt } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import type { ExpiryNoticeStore } from './expiry-notice-store.js'

/** Licenses one step of one notice day reads at most: a step stays short however many licenses expire. */
export const defaultNoticeBatchSize = 500

/** How often each process looks for licenses that reached a notice; a full batch is followed at once. */
export const noticeIntervalMs = 60_000

const dayMs = 86_400_000

export interface ExpiryNoticeServiceDeps {
  readonly store: ExpiryNoticeStore
  readonly clock: Clock
  /** Days before expiry with a `license.expiring_soon` notice (KEYTURN_EXPIRY_NOTICE_DAYS). */
  readonly noticeDays: readonly number[]
  readonly batchSize?: number
}

export interface NoticeRun {
  /** Licenses read by this step, over every notice day. */
  readonly read: number
  /** Events written: `license.expiring_soon` and `license.expired`. */
  readonly noticed: number
  readonly isBatchFull: boolean
}

/**
 * Announces coming and past expiry: `license.expiring_soon` once per license and notice day (with
 * `expiresInDays`), `license.expired` once when its expiration date passes. They are events like any
 * other (audit log, webhooks) and send the expiry mails when mail is configured. A license is
 * announced per notice day for the expiration date it has when the job reaches it: a renewed
 * license is announced again for its new date; a license that reaches a notice day already inside a
 * later one (created or moved to expire in 2 days) gets only the later notices. Revoked licenses
 * get none. A notice day added later starts from the time it is first run, not the past.
 */
export class ExpiryNoticeService {
  readonly #store: ExpiryNoticeStore
  readonly #clock: Clock
  readonly #days: readonly number[]
  readonly #batchSize: number

  constructor(deps: ExpiryNoticeServiceDeps) {
    this.#store = deps.store
    this.#clock = deps.clock
    // Longest first, then 0: the expired notice.
    this.#days = [...new Set([...deps.noticeDays.filter((days) => days > 0), 0])].sort((a, b) => b - a)
    this.#batchSize = deps.batchSize ?? defaultNoticeBatchSize
  }

  async tick(): Promise<NoticeRun> {
    const now = this.#clock.now()
    let read = 0
    let noticed = 0
    let isBatchFull = false
    for (const [index, days] of this.#days.entries()) {
      // A first run starts where the next shorter notice begins: the licenses already inside it get that one.
      const nextDays = this.#days[index + 1] ?? 0
      const step = await this.#store.step({
        days,
        startAt: new Date(now.getTime() + nextDays * dayMs),
        upto: new Date(now.getTime() + days * dayMs),
        limit: this.#batchSize,
        eventsOf: (licenses) => licenses.map((license) => noticeEvent(license, days, now)),
      })
      read += step.read
      noticed += step.noticed
      isBatchFull ||= step.isBatchFull
    }
    return { read, noticed, isBatchFull }
  }
}

function noticeEvent(license: License, days: number, now: Date): Event {
  const resource = toLicenseResource(viewAt(license, now))
  return {
    id: newEventId(now),
    type: days === 0 ? 'license.expired' : 'license.expiring_soon',
    occurredAt: now,
    productId: license.productId,
    actor: { type: 'system', id: 'expiry-notices' },
    requestId: null,
    data: days === 0 ? resource : { ...resource, expiresInDays: days },
  }
}

/** The expiry notices as background work of every serving process. */
export function expiryNoticeJob(service: ExpiryNoticeService, intervalMs = noticeIntervalMs): BackgroundJob {
  return {
    name: 'announcing license expiry',
    idleMs: intervalMs,
    async tick(log) {
      const { read, noticed, isBatchFull } = await service.tick()
      if (noticed > 0) {
        log.info({ read, noticed }, 'announced license expiry')
      }
      return isBatchFull
    },
  }
}
