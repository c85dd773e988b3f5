import { type Kysely, sql } from 'kysely'
import { entitlementCodes, type LicenseRow, rowToLicense } from '../licenses/kysely-license-rows.js'
import { expirationDateBound } from '../licenses/license.js'
import { type Database, toDate } from '../storage/database.js'
import { KyselyEventWriter } from '../storage/event-writer.js'
import { isSqlite, writeTransaction } from '../storage/write-transaction.js'
import type { ExpiryNoticeStore, NoticeStep } from './expiry-notice-store.js'

/**
 * The expression of the licenses' expiry-order index (migration 2026-11-21-03 `licenses_expiration_sort`,
 * on `(coalesce(expiration_date, <bound>), id, …)`): written exactly the same, both engines read
 * the licenses in that index's order from the cursor on, without a sort.
 */
const expirySortKey = sql`coalesce(expiration_date, ${sql.lit(expirationDateBound.toISOString())})`

export class KyselyExpiryNoticeStore implements ExpiryNoticeStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  step(request: Parameters<ExpiryNoticeStore['step']>[0]): Promise<NoticeStep> {
    const { days, startAt, upto, limit, eventsOf } = request
    return writeTransaction(this.#db, async (trx) => {
      await trx
        .insertInto('expiry_notice_cursors')
        .values({ days, through: startAt.toISOString(), through_id: '' })
        .onConflict((conflict) => conflict.column('days').doNothing())
        .execute()
      const cursorQuery = trx.selectFrom('expiry_notice_cursors').selectAll().where('days', '=', days)
      const cursor = await (isSqlite(trx) ? cursorQuery : cursorQuery.forUpdate()).executeTakeFirstOrThrow()
      const through = toDate(cursor.through).toISOString()
      const { rows } = await sql<LicenseRow & { sort_key: Date | string }>`
        select licenses.*, ${entitlementCodes(isSqlite(trx))}, ${expirySortKey} as sort_key
        from licenses
        where (${expirySortKey}, id) > (${through}, ${cursor.through_id})
          and ${expirySortKey} <= ${upto.toISOString()}
        order by ${expirySortKey}, id
        limit ${limit}`.execute(trx)
      const last = rows.at(-1)
      if (last === undefined) {
        return { read: 0, noticed: 0, isBatchFull: false }
      }
      const live = rows.filter((row) => row.revoked_at === null).map(rowToLicense)
      const events = live.length === 0 ? [] : eventsOf(live)
      await new KyselyEventWriter(trx).insert(events)
      await trx
        .updateTable('expiry_notice_cursors')
        .set({ through: toDate(last.sort_key).toISOString(), through_id: last.id })
        .where('days', '=', days)
        .execute()
      return { read: rows.length, noticed: events.length, isBatchFull: rows.length === limit }
    })
  }
}
