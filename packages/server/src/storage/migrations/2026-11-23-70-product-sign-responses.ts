import type { Kysely } from 'kysely'

/**
 * `products.sign_responses`: the product's application-facing answers are always signed
 * (protection/). 0 or 1 on both engines: better-sqlite3 binds no booleans.
 */
export function productSignResponses() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('products')
        .addColumn('sign_responses', 'integer', (col) => col.notNull().defaultTo(0))
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('products').dropColumn('sign_responses').execute()
    },
  }
}
