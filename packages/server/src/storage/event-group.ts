import type { Kysely } from 'kysely'
import type { Event } from '../core/unit-of-work.js'
import type { Database } from './database.js'
import { KyselyEventWriter } from './event-writer.js'
import { StatementGroup } from './statement-group.js'
import { isSqlite, writeTransaction } from './write-transaction.js'

/** At most this many events per shared transaction. */
const maxGroup = 500

/**
 * Group commit for events that go with no change of state (a token issued, a validation outcome):
 * each `write` resolves once its event is committed, and the events that arrive while a commit is
 * under way share the next transaction, so a burst of N pays about two commits (two fsyncs on
 * SQLite), not N. An event that cannot be written fails alone (storage/statement-group.ts).
 */
export class EventGroup {
  readonly #db: Kysely<Database>
  readonly #group: StatementGroup<Event>

  constructor(db: Kysely<Database>) {
    this.#db = db
    this.#group = new StatementGroup<Event>(
      async (events) => {
        await this.#insert(events)
        return []
      },
      maxGroup,
      { overlap: !isSqlite(db) },
    )
  }

  write(event: Event): Promise<void> {
    return this.#group.run(event)
  }

  #insert(events: readonly Event[]): Promise<void> {
    // On PostgreSQL one INSERT of the group's rows is a transaction of its own: BEGIN and COMMIT
    // around it were two of its three round trips; its text is the same for any number of rows
    // (KyselyEventWriter.insertEach). On SQLite it joins the group commit.
    return isSqlite(this.#db)
      ? writeTransaction(this.#db, (trx) => new KyselyEventWriter(trx).insert(events))
      : new KyselyEventWriter(this.#db)
          .insertEach(events)
          .execute(this.#db)
          .then(() => undefined)
  }
}
