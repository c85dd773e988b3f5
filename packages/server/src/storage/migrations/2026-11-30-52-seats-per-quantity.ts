import type { Kysely } from 'kysely'

/**
 * Seats per quantity (integrations/): a policy may say that a license a payment provider sells for
 * a quantity of N gets N × its `max_activations`. 0 or 1, read live at each sale and change.
 */
export function seatsPerQuantity() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('policies')
        .addColumn('seats_per_quantity', 'integer', (col) => col.notNull().defaultTo(0))
        .execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('policies').dropColumn('seats_per_quantity').execute()
    },
  }
}
