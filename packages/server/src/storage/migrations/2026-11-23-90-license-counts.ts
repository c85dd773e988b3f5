import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'

/** The "never expires" bound licenses sort NULL expiration dates as (licenses/license.ts). */
const neverExpires = '9999-12-31T23:59:59.999Z'

/**
 * `license_counts`: how many licenses each product has per UTC day of the expirationDate sort key
 * (`coalesce(expiration_date, <bound>)`, so "never expires" is the bound's day) and per revoked or
 * not, kept by triggers in the same transaction as every write to `licenses`. Lists count their
 * matching licenses from these rows plus an index count of at most the days a filter cuts through,
 * instead of visiting every matching index entry (licenses/kysely-license-counts.ts;
 * docs/decisions/0026-list-totals-from-counts.md). A license's status is revoked, or follows its expiration date and the
 * instant of the request, so these three dimensions answer every status and expiry filter.
 *
 * Triggers rather than code in the stores: every write path (create, PATCH, revoke, reinstate,
 * renew, a first activation that starts the clock, anything later) keeps the counts exact without
 * having to remember them.
 *
 * PostgreSQL: a counter row is locked by its writer until commit, so concurrent creates of licenses
 * expiring on the same day would queue behind one another's commit. Each connection writes to its
 * own stripe (`pg_backend_pid() % 16`: a pool's connections have consecutive process ids, so up to
 * 16 of them never share a row); a day's count is the sum of its stripes. SQLite has one writer and
 * one stripe. A stripe may go negative (a license counted on one connection, revoked on another);
 * only the sum means anything.
 */
export function licenseCounts(kind: DatabaseKind) {
  const day = dayOf(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('license_counts')
        .addColumn('product_id', 'text', (col) => col.notNull())
        .addColumn('expires_on', 'text', (col) => col.notNull())
        .addColumn('revoked', 'integer', (col) => col.notNull())
        .addColumn('stripe', 'integer', (col) => col.notNull())
        .addColumn('licenses', 'bigint', (col) => col.notNull())
        // Day first: a list reads a range of days, in order, grouped by day (summing products and
        // stripes as it goes); on SQLite the table is that index (without rowid), so the read is one
        // ordered scan of it.
        .addPrimaryKeyConstraint('license_counts_pkey', ['expires_on', 'revoked', 'product_id', 'stripe'])
        .$call((table) => (kind === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
        .execute()
      await sql.raw(licenseCountsFill(kind)).execute(db)
      for (const statement of kind === 'sqlite'
        ? sqliteTriggers(day, revoked)
        : postgresTriggers(day, revoked)) {
        await sql.raw(statement).execute(db)
      }
    },

    async down(db: Kysely<unknown>): Promise<void> {
      if (kind === 'sqlite') {
        for (const trigger of ['insert', 'update', 'delete']) {
          await sql.raw(`drop trigger license_counts_${trigger}`).execute(db)
        }
      } else {
        for (const trigger of ['insert', 'update', 'delete']) {
          await sql.raw(`drop trigger license_counts_${trigger} on licenses`).execute(db)
        }
        await sql.raw('drop function license_counts_kept()').execute(db)
      }
      await db.schema.dropTable('license_counts').execute()
    },
  }
}

type RowText = (row: 'new' | 'old' | 'licenses') => string

/** The day a licenses row counts under, as YYYY-MM-DD text on both engines (`row`: new or old). */
const dayOf =
  (kind: DatabaseKind): RowText =>
  (row) =>
    kind === 'sqlite'
      ? `substr(coalesce(${row}.expiration_date, '${neverExpires}'), 1, 10)`
      : `to_char(coalesce(${row}.expiration_date, '${neverExpires}') at time zone 'UTC', 'YYYY-MM-DD')`

const revoked: RowText = (row) => `(case when ${row}.revoked_at is null then 0 else 1 end)`

/**
 * Counts every license into an empty license_counts: the migration's fill, and the benchmark's bulk
 * loader's (bench/seed.mjs loads with the triggers off, then counts once).
 */
export function licenseCountsFill(kind: DatabaseKind): string {
  return `insert into license_counts (product_id, expires_on, revoked, stripe, licenses)
    select product_id, ${dayOf(kind)('licenses')}, ${revoked('licenses')}, 0, count(*)
    from licenses group by 1, 2, 3`
}

/** The key a row counts under has changed (an update that moves no count fires nothing). */
const moved = (day: RowText, revoked: RowText) =>
  `old.product_id <> new.product_id or ${day('old')} <> ${day('new')} or ${revoked('old')} <> ${revoked('new')}`

function sqliteTriggers(day: RowText, revoked: RowText): string[] {
  const add = (row: 'new' | 'old', delta: number) =>
    `insert into license_counts (product_id, expires_on, revoked, stripe, licenses)
       values (${row}.product_id, ${day(row)}, ${revoked(row)}, 0, ${delta})
       on conflict (expires_on, revoked, product_id, stripe) do update set licenses = licenses + ${delta};`
  return [
    `create trigger license_counts_insert after insert on licenses begin ${add('new', 1)} end`,
    `create trigger license_counts_update after update of product_id, expiration_date, revoked_at on licenses
       when ${moved(day, revoked)}
       begin ${add('old', -1)} ${add('new', 1)} end`,
    `create trigger license_counts_delete after delete on licenses begin ${add('old', -1)} end`,
  ]
}

function postgresTriggers(day: RowText, revoked: RowText): string[] {
  const add = (row: 'new' | 'old', delta: number) =>
    `insert into license_counts (product_id, expires_on, revoked, stripe, licenses)
       values (${row}.product_id, ${day(row)}, ${revoked(row)}, pg_backend_pid() % 16, ${delta})
       on conflict (expires_on, revoked, product_id, stripe)
       do update set licenses = license_counts.licenses + excluded.licenses;`
  return [
    // `set search_path from current`: the function finds license_counts in the schema it was made
    // in, whatever the writing session's search_path.
    `create function license_counts_kept() returns trigger language plpgsql
       set search_path from current as $$
       begin
         if tg_op in ('UPDATE', 'DELETE') then ${add('old', -1)} end if;
         if tg_op in ('INSERT', 'UPDATE') then ${add('new', 1)} end if;
         return null;
       end
     $$`,
    `create trigger license_counts_insert after insert on licenses
       for each row execute function license_counts_kept()`,
    `create trigger license_counts_update after update of product_id, expiration_date, revoked_at on licenses
       for each row when (${moved(day, revoked)}) execute function license_counts_kept()`,
    `create trigger license_counts_delete after delete on licenses
       for each row execute function license_counts_kept()`,
  ]
}
