import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'

/**
 * Global search (search/): every kind of query is one index lookup. Keys, ids and emails already
 * have unique indexes; this adds the lower-cased names (customers and machines) for prefix ranges
 * and machine fingerprints for exact matches. On PostgreSQL the name indexes use the "C" collation,
 * so a prefix is exactly a byte range, whatever the database's own collation.
 */
export function searchIndexes(kind: DatabaseKind) {
  const lowerName = kind === 'postgres' ? sql`(lower(name) collate "C")` : sql`lower(name)`
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`create index customers_name_lower on customers (${lowerName})`.execute(db)
      await sql`create index activations_name_lower on activations (${lowerName})`.execute(db)
      await db.schema.createIndex('activations_fingerprint').on('activations').column('fingerprint').execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('activations_fingerprint').execute()
      await db.schema.dropIndex('activations_name_lower').execute()
      await db.schema.dropIndex('customers_name_lower').execute()
    },
  }
}
