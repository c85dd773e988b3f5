import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'

/** The JSON types a metadata value may have that `filter=metadata.<key>:eq:<value>` can match. */
const matchable = `('text', 'integer', 'real', 'true', 'false')`

/** Metadata entries as license_metadata rows: the written row's (`new`), or every license's. */
const entriesOf = (row: 'new' | 'licenses') =>
  `select ${row}.id, entry.key, entry.type, entry.value
     from ${row === 'licenses' ? 'licenses, ' : ''}json_each(${row}.metadata) as entry
     where entry.type in ${matchable}`

/**
 * What makes `filter=metadata.<key>:eq:<value>` fast on each engine (licenses/kysely-license-store.ts,
 * sparseMetadataLimit; docs/decisions/0021-metadata-lookups.md).
 *
 * SQLite: `license_metadata`, one row per key of each license's metadata, indexed by key and value,
 * so that a value few licenses hold (a billing system's subscription id) is found through an index
 * instead of by reading every license's JSON: at 1M licenses, about 8 s of the server's only thread
 * per lookup before. `value` has no declared type, so each value keeps its JSON type: the text "5"
 * and the number 5 are different values, as the filter's rules want. Booleans are 1 and 0 with
 * `type` true or false. Kept by triggers in the same transaction as every write to `licenses`, as
 * license_counts is (migration 90): no write path has to remember it.
 *
 * PostgreSQL: the GIN index of migration 50 without its pending list (`fastupdate = off`). With it,
 * new licenses' entries wait in an unsorted list (up to 4 MB) that every lookup reads through until
 * a vacuum sorts them in: after 40,000 creates at 1M licenses, lookups fell from 1,880 to 590 per
 * second, and back to 2,530 once the list was cleaned. Without it, each write puts its entries in
 * place (a few per license).
 */
export function licenseMetadata(kind: DatabaseKind) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (kind === 'postgres') {
        await sql`alter index licenses_metadata set (fastupdate = off)`.execute(db)
        await sql`select gin_clean_pending_list('licenses_metadata')`.execute(db)
        return
      }
      await sql
        .raw(`create table license_metadata (
          license_id text not null,
          key text not null,
          type text not null,
          value,
          primary key (license_id, key)
        ) without rowid`)
        .execute(db)
      await sql
        .raw(`insert into license_metadata (license_id, key, type, value) ${entriesOf('licenses')}`)
        .execute(db)
      await sql.raw('create index license_metadata_lookup on license_metadata (key, value)').execute(db)
      const fill = `insert into license_metadata (license_id, key, type, value) ${entriesOf('new')};`
      const clear = 'delete from license_metadata where license_id = old.id;'
      await sql
        .raw(`create trigger license_metadata_insert after insert on licenses begin ${fill} end`)
        .execute(db)
      await sql
        .raw(`create trigger license_metadata_update after update of metadata on licenses
          when old.metadata is not new.metadata begin ${clear} ${fill} end`)
        .execute(db)
      await sql
        .raw(`create trigger license_metadata_delete after delete on licenses begin ${clear} end`)
        .execute(db)
    },

    async down(db: Kysely<unknown>): Promise<void> {
      if (kind === 'postgres') {
        await sql`alter index licenses_metadata reset (fastupdate)`.execute(db)
        return
      }
      for (const trigger of ['insert', 'update', 'delete']) {
        await sql.raw(`drop trigger license_metadata_${trigger}`).execute(db)
      }
      await sql.raw('drop table license_metadata').execute(db)
    },
  }
}
