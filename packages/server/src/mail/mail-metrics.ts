import { Counter, Gauge, type Registry } from 'prom-client'
import { databaseFaultOf } from '../storage/database-faults.js'
import type { KyselyMailOutbox } from './kysely-mail-outbox.js'
import type { MailWorker } from './mail-worker.js'

/**
 * Mail metrics: this process's sent messages and failed attempts (counters; Prometheus sums the
 * processes) and the shared backlog read at scrape time (a gauge; it keeps its last value while
 * the database does not answer).
 */
export function registerMailMetrics(
  registry: Registry,
  outbox: KyselyMailOutbox,
  worker: MailWorker | undefined,
): void {
  new Counter({
    name: 'keyturn_mail_sent_total',
    help: 'Mail messages accepted by the SMTP server from this process.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(worker?.counters.sent ?? 0)
    },
  })
  new Counter({
    name: 'keyturn_mail_failed_attempts_total',
    help: 'Attempts by this process to send a mail message that the SMTP server refused or that failed.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(worker?.counters.failedAttempts ?? 0)
    },
  })
  new Gauge({
    name: 'keyturn_mail_pending',
    help: 'Mail messages waiting to be sent (all processes).',
    registers: [registry],
    async collect() {
      try {
        this.set(await outbox.backlog())
      } catch (error) {
        if (databaseFaultOf(error) === undefined) {
          throw error
        }
      }
    },
  })
}
