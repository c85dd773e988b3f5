import { randomUUID } from 'node:crypto'
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool } from 'kysely'
import type { Database } from './database.js'
import { isSqlite, writeTransaction } from './write-transaction.js'

/**
 * The tables of work that processes share by leasing rows (the mail outbox, webhook deliveries):
 * each has `status`, `next_attempt_at`, `lease_id` and `lease_until`.
 */
export type LeasedTable = 'mail_outbox' | 'webhook_deliveries'

/** Rows leased together: the lease's id stamps each row, so a process writes back only the rows it still holds. */
export interface LeasedRows<Row> {
  readonly leaseId: string
  readonly rows: Row[]
}

/**
 * Leases up to `limit` rows of `table` that are pending, due at `now` and held by no live lease,
 * the longest due first, until `leaseUntil`, and returns them as leased. `narrow` adds the caller's own conditions.
 * On PostgreSQL rows another process is claiming at the same moment are skipped (FOR UPDATE SKIP
 * LOCKED), so two processes never lease the same row; SQLite writes one transaction at a time.
 */
export async function leaseDueRows<T extends LeasedTable>(
  db: Kysely<Database>,
  table: T,
  now: Date,
  leaseUntil: Date,
  limit: number,
  narrow?: (eb: ExpressionBuilder<Database, LeasedTable>) => Expression<SqlBool>,
): Promise<LeasedRows<Selectable<Database[T]>>> {
  const leaseId = randomUUID()
  const at = now.toISOString()
  const rows = await writeTransaction(db, async (trx) => {
    // One of the two tables; typed as their union, whose shared columns are all this reads or writes.
    const leased: LeasedTable = table
    let due = trx
      .selectFrom(leased)
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', at)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', at)]))
      .orderBy('next_attempt_at')
      .limit(limit)
    if (narrow !== undefined) {
      due = due.where(narrow)
    }
    if (!isSqlite(trx)) {
      due = due.forUpdate().skipLocked()
    }
    const ids = (await due.execute()).map((row) => row.id)
    if (ids.length === 0) {
      return []
    }
    return trx
      .updateTable(leased)
      .set({ lease_id: leaseId, lease_until: leaseUntil.toISOString() })
      .where('id', 'in', ids)
      .returningAll()
      .execute()
  })
  return { leaseId, rows: rows as Selectable<Database[T]>[] }
}
