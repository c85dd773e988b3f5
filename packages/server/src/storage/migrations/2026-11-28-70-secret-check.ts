import type { Kysely } from 'kysely'

/**
 * `secret_check`: one row (`id = 'master'`) holding a check value derived from the master secret
 * (core/secrets.ts, `secretCheckValue`: an HMAC of a constant under a key derived from it, never
 * the secret). The row is written by the first start that finds it missing, right after the
 * migrations (storage/secret-check.ts): an empty database with the secret it is getting, a database
 * from before this migration with the secret it runs with. From then on a start with another
 * secret (a restored backup without its `keyturn.secret`) stops instead of serving with a new
 * secret that none of the stored API keys match.
 */
export function secretCheck() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('secret_check')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('value', 'text', (column) => column.notNull())
        .execute()
    },
  }
}
