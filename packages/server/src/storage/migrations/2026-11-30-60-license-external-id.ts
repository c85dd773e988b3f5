import type { Kysely } from 'kysely'

/**
 * A license's id in the system it was imported from (`externalId`): unique per product, so a batch
 * import run twice finds what the first run made instead of making it again. Licenses made here
 * have none (null; any number of nulls is allowed by the unique index on both engines).
 */
export function licenseExternalId() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('licenses').addColumn('external_id', 'text').execute()
      await db.schema
        .createIndex('licenses_product_external_id')
        .on('licenses')
        .columns(['product_id', 'external_id'])
        .unique()
        .execute()
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('licenses_product_external_id').execute()
      await db.schema.alterTable('licenses').dropColumn('external_id').execute()
    },
  }
}
