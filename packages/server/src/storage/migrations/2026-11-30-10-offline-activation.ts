import { createHash } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * Offline activation (offline/):
 * - `licenses.key_hint`: base64url of the first 12 bytes of SHA-256 of the key as stored, indexed
 *   with the product, so a request file names its license without carrying the key (the request's
 *   HMAC then proves the key). Existing rows are filled here, in batches.
 * - `offline_requests`: the activation each request (by license and nonce) made and when it was
 *   first answered, so the same request again gets the same activation and the same file.
 * - `offline_deactivation_locks`: wrong deactivation codes in a row per activation, and the lock
 *   they set (deleted with the activation).
 */
export function offlineActivation(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('licenses').addColumn('key_hint', 'text').execute()
      if (kind === 'postgres') {
        // One statement: PostgreSQL has SHA-256 (12 bytes make 16 base64 characters, no padding).
        await sql`update licenses set key_hint = translate(
            encode(substring(sha256(convert_to(key, 'UTF8')) from 1 for 12), 'base64'), '+/', '-_')`.execute(
          db,
        )
      } else {
        // SQLite has no SHA-256: computed here, in batches, inside the migration's transaction.
        const hint = (key: string) =>
          createHash('sha256').update(key, 'utf8').digest().subarray(0, 12).toString('base64url')
        let after = ''
        for (;;) {
          const { rows } = await sql<{ id: string; key: string }>`
            select id, key from licenses where id > ${after} order by id limit 1000`.execute(db)
          for (const row of rows) {
            await sql`update licenses set key_hint = ${hint(row.key)} where id = ${row.id}`.execute(db)
          }
          const last = rows.at(-1)
          if (last === undefined) {
            break
          }
          after = last.id
        }
      }
      await db.schema
        .createIndex('licenses_product_key_hint')
        .on('licenses')
        .columns(['product_id', 'key_hint'])
        .execute()
      await db.schema
        .createTable('offline_requests')
        .addColumn('license_id', 'text', (col) => col.notNull().references('licenses.id').onDelete('cascade'))
        .addColumn('nonce', 'text', (col) => col.notNull())
        .addColumn('activation_id', 'text', (col) => col.notNull())
        .addColumn('issued_at', types.timestamp, (col) => col.notNull())
        .addPrimaryKeyConstraint('offline_requests_pk', ['license_id', 'nonce'])
        .execute()
      await db.schema
        .createTable('offline_deactivation_locks')
        .addColumn('activation_id', 'text', (col) =>
          col.primaryKey().references('activations.id').onDelete('cascade'),
        )
        .addColumn('failures', 'integer', (col) => col.notNull())
        .addColumn('locked_until', types.timestamp)
        .execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('offline_deactivation_locks').execute()
      await db.schema.dropTable('offline_requests').execute()
      await db.schema.dropIndex('licenses_product_key_hint').execute()
      await db.schema.alterTable('licenses').dropColumn('key_hint').execute()
    },
  }
}
