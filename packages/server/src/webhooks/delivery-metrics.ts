import { Counter, Gauge, type Registry } from 'prom-client'
import { databaseFaultOf } from '../storage/database-faults.js'
import type { DeliveryWorker } from './delivery-worker.js'

/**
 * Webhook delivery metrics: this process's delivered and failed attempts (counters; Prometheus sums
 * the processes), and the shared backlog read from the database at scrape time (gauges).
 */
export function registerDeliveryMetrics(registry: Registry, worker: DeliveryWorker): void {
  new Counter({
    name: 'keyturn_webhook_deliveries_delivered_total',
    help: 'Webhook deliveries answered with a 2xx by this process.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(worker.counters.delivered)
    },
  })
  new Counter({
    name: 'keyturn_webhook_delivery_failed_attempts_total',
    help: 'Webhook delivery attempts by this process that failed (non-2xx, timeout, refused).',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(worker.counters.failedAttempts)
    },
  })
  // Each gauge reads the backlog itself: a value set from another metric's collect would show the
  // previous scrape's (the registry serialises each metric as soon as its own collect is done).
  // While the database does not answer, they keep their last value: the scrape still shows the rest
  // (the database's own gauges say it is unreachable).
  new Gauge({
    name: 'keyturn_webhook_deliveries_pending',
    help: 'Webhook deliveries waiting to be sent (all processes).',
    registers: [registry],
    async collect() {
      const backlog = await backlogOf(worker)
      if (backlog !== undefined) {
        this.set(backlog.count)
      }
    },
  })
  new Gauge({
    name: 'keyturn_webhook_oldest_pending_delivery_age_seconds',
    help: 'Age of the oldest pending webhook delivery; 0 when none.',
    registers: [registry],
    async collect() {
      const backlog = await backlogOf(worker)
      if (backlog !== undefined) {
        const { oldest } = backlog
        this.set(oldest === null ? 0 : Math.max(0, (worker.now().getTime() - oldest.getTime()) / 1000))
      }
    },
  })
  new Gauge({
    name: 'keyturn_webhook_events_undispatched',
    help: 'Events recorded but not yet turned into webhook deliveries (all processes): grows while every delivery loop waits on slow receivers.',
    registers: [registry],
    async collect() {
      const count = await unlessDatabaseFault(() => worker.undispatchedEvents())
      if (count !== undefined) {
        this.set(count)
      }
    },
  })
}

function backlogOf(worker: DeliveryWorker) {
  return unlessDatabaseFault(() => worker.pendingBacklog())
}

async function unlessDatabaseFault<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read()
  } catch (error) {
    if (databaseFaultOf(error) === undefined) {
      throw error
    }
    return undefined
  }
}
