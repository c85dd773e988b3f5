import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

/**
 * What vendors sell (docs/decisions/0020-customers-policies-entitlements.md): customers, entitlements, policies, metadata on licenses, customers,
 * policies and products, and the license columns that tie them together.
 */
export function vendors(kind: DatabaseKind) {
  const types = columnTypes(kind)
  const emptyObject = sql`'{}'`
  // Seconds up to 100 years: past PostgreSQL's 32-bit integer (migration 31 widens older databases).
  const seconds = kind === 'postgres' ? 'bigint' : 'integer'
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('customers')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('email', 'text', (col) => col.notNull())
        // lower(email): uniqueness and lookups are case-insensitive, alike on both engines.
        .addColumn('email_lower', 'text', (col) => col.notNull().unique())
        .addColumn('name', 'text')
        .addColumn('metadata', types.json, (col) => col.notNull().defaultTo(emptyObject))
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('customers_created_at_id')
        .on('customers')
        .columns(['created_at', 'id'])
        .execute()

      await db.schema
        .createTable('entitlements')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('product_id', 'text', (col) => col.notNull().references('products.id'))
        .addColumn('code', 'text', (col) => col.notNull())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .addUniqueConstraint('entitlements_product_id_code', ['product_id', 'code'])
        .execute()

      await db.schema
        .createTable('policies')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('product_id', 'text', (col) => col.notNull().references('products.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('max_activations', 'integer')
        .addColumn('duration', seconds)
        .addColumn('expiration_basis', 'text', (col) => col.notNull())
        .addColumn('metadata', types.json, (col) => col.notNull().defaultTo(emptyObject))
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('policies_product_id_created_at_id')
        .on('policies')
        .columns(['product_id', 'created_at', 'id'])
        .execute()

      // Deleting an entitlement detaches it everywhere: the link rows cascade.
      await db.schema
        .createTable('policy_entitlements')
        .addColumn('policy_id', 'text', (col) => col.notNull().references('policies.id').onDelete('cascade'))
        .addColumn('entitlement_id', 'text', (col) =>
          col.notNull().references('entitlements.id').onDelete('cascade'),
        )
        .addPrimaryKeyConstraint('policy_entitlements_pkey', ['policy_id', 'entitlement_id'])
        .execute()
      await db.schema
        .createIndex('policy_entitlements_entitlement_id')
        .on('policy_entitlements')
        .column('entitlement_id')
        .execute()
      await db.schema
        .createTable('license_entitlements')
        .addColumn('license_id', 'text', (col) => col.notNull().references('licenses.id').onDelete('cascade'))
        .addColumn('entitlement_id', 'text', (col) =>
          col.notNull().references('entitlements.id').onDelete('cascade'),
        )
        .addPrimaryKeyConstraint('license_entitlements_pkey', ['license_id', 'entitlement_id'])
        .execute()
      await db.schema
        .createIndex('license_entitlements_entitlement_id')
        .on('license_entitlements')
        .column('entitlement_id')
        .execute()

      await db.schema
        .alterTable('licenses')
        .addColumn('customer_id', 'text', (col) => col.references('customers.id'))
        .execute()
      await db.schema
        .alterTable('licenses')
        .addColumn('policy_id', 'text', (col) => col.references('policies.id'))
        .execute()
      await db.schema
        .alterTable('licenses')
        .addColumn('metadata', types.json, (col) => col.notNull().defaultTo(emptyObject))
        .execute()
      // Set while a license made from a `firstActivation` policy waits for its first activation:
      // the seconds that activation adds to its time to make the expiration date; then null.
      await db.schema.alterTable('licenses').addColumn('first_activation_duration', seconds).execute()
      await db.schema
        .alterTable('products')
        .addColumn('metadata', types.json, (col) => col.notNull().defaultTo(emptyObject))
        .execute()

      // customerId filters (a billing integration's "licenses of this customer") and the product
      // key's view of customers (those owning a license of its product).
      await db.schema
        .createIndex('licenses_customer_id_product_id')
        .on('licenses')
        .columns(['customer_id', 'product_id'])
        .execute()
      await db.schema.createIndex('licenses_policy_id').on('licenses').column('policy_id').execute()
      if (kind === 'postgres') {
        // `filter=metadata.<key>:eq:<value>` is `metadata @> {"key": value}`: a GIN index answers it
        // for any key. SQLite has no such index; its cost is described in docs/decisions/0021-metadata-lookups.md.
        await sql`create index licenses_metadata on licenses using gin (metadata jsonb_path_ops)`.execute(db)
      }
    },

    async down(db: Kysely<unknown>): Promise<void> {
      if (kind === 'postgres') {
        await sql`drop index licenses_metadata`.execute(db)
      }
      await db.schema.dropIndex('licenses_policy_id').execute()
      await db.schema.dropIndex('licenses_customer_id_product_id').execute()
      await db.schema.alterTable('products').dropColumn('metadata').execute()
      for (const column of ['first_activation_duration', 'metadata', 'policy_id', 'customer_id']) {
        await db.schema.alterTable('licenses').dropColumn(column).execute()
      }
      for (const table of [
        'license_entitlements',
        'policy_entitlements',
        'policies',
        'entitlements',
        'customers',
      ]) {
        await db.schema.dropTable(table).execute()
      }
    },
  }
}
