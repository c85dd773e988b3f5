import { type Kysely, sql } from 'kysely'

/** The "never expires" bound licenses sort NULL expiration dates as (licenses/license.ts). */
const neverExpires = '9999-12-31T23:59:59.999Z'

/**
 * Indexes for license lists over large tables (the benchmark's 1M licenses):
 * - the expirationDate sort is `coalesce(expiration_date, <bound>)` then id: an index on exactly
 *   that expression lets both engines read a page in order, and seek for `starting_after`;
 * - status filters read `revoked_at` beside `expiration_date`: with both in one index, counting
 *   the matching licenses needs no table lookups.
 */
export function listIndexes() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // expiration_date and revoked_at ride along, so status and expiry filters (and counts, and
      // OFFSET scans) are answered from the index alone.
      const sortKey = sql`(coalesce(expiration_date, ${sql.lit(neverExpires)})), id, expiration_date, revoked_at`
      await sql`create index licenses_expiration_sort on licenses (${sortKey})`.execute(db)
      await sql`create index licenses_product_id_expiration_sort on licenses (product_id, ${sortKey})`.execute(
        db,
      )
      await db.schema.dropIndex('licenses_expiration_date').execute()
      await db.schema
        .createIndex('licenses_expiration_date_revoked_at')
        .on('licenses')
        .columns(['expiration_date', 'revoked_at'])
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('licenses_expiration_date_revoked_at').execute()
      await db.schema
        .createIndex('licenses_expiration_date')
        .on('licenses')
        .column('expiration_date')
        .execute()
      await db.schema.dropIndex('licenses_product_id_expiration_sort').execute()
      await db.schema.dropIndex('licenses_expiration_sort').execute()
    },
  }
}
