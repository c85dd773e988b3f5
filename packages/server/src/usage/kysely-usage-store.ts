import type { LicenseId } from '@keyturn/protocol'
import { type Kysely, type SqlBool, sql } from 'kysely'
import type { Event } from '../core/unit-of-work.js'
import type { Database } from '../storage/database.js'
import { KyselyEventWriter } from '../storage/event-writer.js'
import { executeAsOne, returnedBy, runsAlone } from '../storage/one-statement.js'
import { writeTransaction } from '../storage/write-transaction.js'
import type { IncrementOutcome, UsageStore } from './usage-store.js'

/**
 * The guard and the addition are one statement: the database serialises concurrent ones on the
 * license row, so `uses` never passes `max_uses` and a refused increment adds nothing (no row).
 */
function guardedIncrement(db: Kysely<Database>, licenseId: LicenseId, increment: number) {
  return db
    .updateTable('licenses')
    .set({ uses: sql`uses + ${increment}` })
    .where('id', '=', licenseId)
    .where(sql<SqlBool>`(max_uses is null or uses + ${increment} <= max_uses)`)
    .returning('uses')
}

export class KyselyUsageStore implements UsageStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async increment(
    licenseId: LicenseId,
    increment: number,
    events: readonly Event[],
  ): Promise<IncrementOutcome | undefined> {
    if (runsAlone(this.#db)) {
      return this.#incrementInOneStatement(licenseId, increment, events)
    }
    return writeTransaction(this.#db, async (trx) => {
      const row = await guardedIncrement(trx, licenseId, increment).executeTakeFirst()
      if (row === undefined) {
        return this.#refused(trx, licenseId)
      }
      const uses = Number(row.uses) // pg reads bigint as a string
      await new KyselyEventWriter(trx).insert(
        events.map((event) => ({ ...event, data: { ...event.data, uses } })),
      )
      return { kind: 'incremented', uses }
    })
  }

  /**
   * Fast path (PostgreSQL, outside a transaction): the guarded update and its events are ONE
   * statement (storage/one-statement.ts), where BEGIN, the update, the event's insert and COMMIT
   * were four round trips: an increment made 5 (with the read that confirms the API key), now 2.
   * It was the slowest write (2,399 increments/s at 357 µs of server CPU in the full run at 1M
   * licenses); builds.mjs at 200k: 2,300 → 3,193/s, 359 → 255 µs, paired 147% (docs/decisions/0017-fewer-round-trips-postgresql.md).
   *
   * Each event's `uses` is taken from the row the update returned (the event writer completes the
   * JSON in SQL): under concurrent increments each event carries the count its own increment made.
   * A refused update returns no row: then no event is inserted either (`insertIfReturnedQueries`),
   * and the statement returns nothing.
   */
  async #incrementInOneStatement(
    licenseId: LicenseId,
    increment: number,
    events: readonly Event[],
  ): Promise<IncrementOutcome | undefined> {
    const [row] = await executeAsOne<{ readonly uses: number | string }>(this.#db, [
      guardedIncrement(this.#db, licenseId, increment),
      ...new KyselyEventWriter(this.#db).insertIfReturnedQueries(events, 0, { uses: 'uses' }),
      sql`select uses from ${returnedBy(0)}`,
    ])
    if (row !== undefined) {
      return { kind: 'incremented', uses: Number(row.uses) } // pg reads bigint as a string
    }
    return this.#refused(this.#db, licenseId)
  }

  /** Why the guarded update changed nothing: the limit (with the count as it is now), or no license. */
  async #refused(db: Kysely<Database>, licenseId: LicenseId): Promise<IncrementOutcome | undefined> {
    const current = await db
      .selectFrom('licenses')
      .select(['uses', 'max_uses'])
      .where('id', '=', licenseId)
      .executeTakeFirst()
    if (current === undefined) {
      return undefined
    }
    return { kind: 'limit_reached', uses: Number(current.uses), maxUses: Number(current.max_uses) }
  }

  async reset(licenseId: LicenseId, at: Date): Promise<boolean> {
    const result = await this.#db
      .updateTable('licenses')
      .set({ uses: 0, uses_reset_at: at.toISOString() })
      .where('id', '=', licenseId)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
}
