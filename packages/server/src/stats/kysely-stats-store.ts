import { type Kysely, sql } from 'kysely'
import type { Database } from '../storage/database.js'
import { isSqlite } from '../storage/write-transaction.js'
import type { DailyCountRow } from './daily-counters.js'
import type { NowFigures, StatsScope, StatsStore } from './stats-store.js'

const columns = [
  'validations_valid',
  'validations_invalid',
  'activations',
  'deactivations',
  'licenses_created',
  'licenses_renewed',
  'licenses_revoked',
  'licenses_sold',
  'provider_renewals',
  'payment_failures',
  'refund_revocations',
] as const

/**
 * `daily_stats` (migrations 2026-11-30-80 and 2026-12-01-80) and the "now" figures from the existing indexes:
 * `activations_product_id_created_at_id` and the partial `activations_expires_at` for machines,
 * `licenses_product_id_expiration_date` / `licenses_expiration_date` for expiring licenses.
 */
export class KyselyStatsStore implements StatsStore {
  readonly #db: Kysely<Database>
  readonly #sqlite: boolean

  constructor(db: Kysely<Database>) {
    this.#db = db
    this.#sqlite = isSqlite(db)
  }

  async add(rows: readonly DailyCountRow[]): Promise<void> {
    if (rows.length === 0) {
      return
    }
    // One statement: atomic on both engines, so a failed flush added nothing and can be retried.
    // Rows in key order: processes flushing at once lock the rows they share in the same order, so
    // PostgreSQL never finds two of them waiting for each other.
    const ordered = [...rows].sort((a, b) => compare(a.productId, b.productId) || compare(a.day, b.day))
    await this.#db
      .insertInto('daily_stats')
      .values(
        ordered.map((row) => ({
          product_id: row.productId,
          day: row.day,
          ...Object.fromEntries(columns.map((column, slot) => [column, row.counts[slot] ?? 0])),
        })) as never,
      )
      .onConflict((conflict) =>
        conflict
          .columns(['product_id', 'day'])
          .doUpdateSet(
            Object.fromEntries(
              columns.map((column) => [
                column,
                sql`daily_stats.${sql.ref(column)} + excluded.${sql.ref(column)}`,
              ]),
            ),
          ),
      )
      .execute()
  }

  async days(from: string, to: string, scope: StatsScope): Promise<Omit<DailyCountRow, 'productId'>[]> {
    let query = this.#db
      .selectFrom('daily_stats')
      .select('day')
      .select((eb) => columns.map((column) => eb.fn.sum<number | string>(column).as(column)))
      .where('day', '>=', from)
      .where('day', '<=', to)
      .groupBy('day')
      .orderBy('day')
    if (scope !== undefined) {
      query = query.where('product_id', '=', scope.productId)
    }
    const rows = await query.execute()
    return rows.map((row) => ({
      day: row.day,
      counts: columns.map((column) => Number(row[column] ?? 0)),
    }))
  }

  async now(now: Date, until: Date, scope: StatsScope): Promise<NowFigures> {
    const at = this.#sqlite ? now.toISOString() : now
    const end = this.#sqlite ? until.toISOString() : until
    const product = (table: string) =>
      scope === undefined ? sql`` : sql` and ${sql.ref(`${table}.product_id`)} = ${scope.productId}`
    // All activations of the scope, less those whose lease ended (a range of the expires_at index).
    const { rows } = await sql<{
      machines: number | string
      lapsed: number | string
      expiring: number | string
    }>`
      select
        (select count(*) from activations where 1 = 1${product('activations')}) as machines,
        (select count(*) from activations where expires_at <= ${at}${product('activations')}) as lapsed,
        (select count(*) from licenses where expiration_date > ${at} and expiration_date <= ${end}
          and revoked_at is null${product('licenses')}) as expiring`.execute(this.#db)
    const row = rows[0]
    return {
      activeMachines: Number(row?.machines ?? 0) - Number(row?.lapsed ?? 0),
      licensesExpiringSoon: Number(row?.expiring ?? 0),
    }
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
