import type { Kysely } from 'kysely'

/**
 * Indexes for `GET /activations` (every license's activations, newest first; a product key's or a
 * `productId` query's only): the list reads a page of ids from the sort index, then those rows.
 */
export function activationListIndexes() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createIndex('activations_created_at_id')
        .on('activations')
        .columns(['created_at', 'id'])
        .execute()
      await db.schema
        .createIndex('activations_product_id_created_at_id')
        .on('activations')
        .columns(['product_id', 'created_at', 'id'])
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('activations_product_id_created_at_id').execute()
      await db.schema.dropIndex('activations_created_at_id').execute()
    },
  }
}
