import type { LicenseId } from '@keyturn/protocol'
import { type Kysely, type SqlBool, sql } from 'kysely'
import type { Database } from '../storage/database.js'
import type { IncrementOutcome, UsageStore } from './usage-store.js'

export class KyselyUsageStore implements UsageStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async increment(licenseId: LicenseId, increment: number): Promise<IncrementOutcome | undefined> {
    // The guard and the addition are one statement: the database serialises concurrent ones on the
    // license row, so `uses` never passes `max_uses` and a refused increment adds nothing.
    const row = await this.#db
      .updateTable('licenses')
      .set({ uses: sql`uses + ${increment}` })
      .where('id', '=', licenseId)
      .where(sql<SqlBool>`(max_uses is null or uses + ${increment} <= max_uses)`)
      .returning('uses')
      .executeTakeFirst()
    if (row !== undefined) {
      return { kind: 'incremented', uses: Number(row.uses) } // pg reads bigint as a string
    }
    const current = await this.#db
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
