import type { Kysely } from 'kysely'

/** How a product shows itself to customers (mails, the customer portal): one JSON column, null until set. */
export function productBranding() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('products').addColumn('branding', 'text').execute()
    },
  }
}
