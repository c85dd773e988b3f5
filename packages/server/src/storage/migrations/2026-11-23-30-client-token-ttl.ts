import type { Kysely } from 'kysely'

/**
 * `products.client_token_ttl`: the longest token a client key obtains for the product (docs/decisions/0008-hostile-input.md).
 * Existing products get the default, 7 days (protocol's defaultClientTokenTtlSeconds, frozen here).
 */
export function clientTokenTtl() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('products')
        .addColumn('client_token_ttl', 'integer', (col) => col.notNull().defaultTo(604_800))
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('products').dropColumn('client_token_ttl').execute()
    },
  }
}
