import type { Kysely } from 'kysely'
import type { Event } from '../events/event.js'
import { KyselyEventStore } from '../events/kysely-event-store.js'
import type { Database } from './database.js'
import { isSqlite, writeTransaction } from './write-transaction.js'

/** At most this many events per shared transaction. */
const maxGroup = 500

/**
 * Group commit for events that go with no change of state (a token issued, a validation outcome):
 * each `write` resolves once its event is committed, and the events that arrive while a commit is
 * under way share the next transaction, so a burst of N pays about two commits (two fsyncs on
 * SQLite), not N. An event that cannot be written fails alone: a failed group is retried one by one.
 */
export class EventGroup {
  readonly #db: Kysely<Database>
  readonly #waiting: { readonly event: Event; readonly done: (error?: unknown) => void }[] = []
  #isFlushing = false

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  write(event: Event): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ event, done: (error) => (error === undefined ? resolve() : reject(error)) })
      if (!this.#isFlushing) {
        void this.#flush()
      }
    })
  }

  async #flush(): Promise<void> {
    this.#isFlushing = true
    try {
      while (this.#waiting.length > 0) {
        // Let requests under way reach their event first (better-sqlite3 blocks the thread while it
        // commits): the group grows instead of committing the first arrival alone.
        await new Promise((resolve) => setImmediate(resolve))
        const group = this.#waiting.splice(0, maxGroup)
        try {
          await this.#insert(group.map((waiting) => waiting.event))
          for (const waiting of group) {
            waiting.done()
          }
        } catch (error) {
          if (group.length === 1) {
            group[0]?.done(error)
            continue
          }
          for (const waiting of group) {
            await this.#insert([waiting.event]).then(
              () => waiting.done(),
              (single: unknown) => waiting.done(single),
            )
          }
        }
      }
    } finally {
      this.#isFlushing = false
    }
  }

  #insert(events: readonly Event[]): Promise<void> {
    // On PostgreSQL one INSERT of the group's rows is a transaction of its own: BEGIN and COMMIT
    // around it were two of its three round trips. On SQLite it joins the group commit.
    return isSqlite(this.#db)
      ? writeTransaction(this.#db, (trx) => new KyselyEventStore(trx).insert(events))
      : new KyselyEventStore(this.#db).insert(events)
  }
}
