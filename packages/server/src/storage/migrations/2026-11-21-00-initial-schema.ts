import { type Kysely, sql } from 'kysely'
import type { DatabaseKind } from '../database.js'
import { columnTypes } from './column-types.js'

export function initialSchema(kind: DatabaseKind) {
  const types = columnTypes(kind)
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('products')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('suspended_at', types.timestamp)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      await db.schema
        .createIndex('products_created_at_id')
        .on('products')
        .columns(['created_at', 'id'])
        .execute()

      await db.schema
        .createTable('product_keys')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('product_id', 'text', (col) => col.notNull().references('products.id').onDelete('cascade'))
        .addColumn('public_key_pem', 'text', (col) => col.notNull())
        .addColumn('private_key_encrypted', 'text', (col) => col.notNull())
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        // null: the current key (exactly one per product); set when a rotation replaces it.
        .addColumn('retired_at', types.timestamp)
        .execute()
      await db.schema
        .createIndex('product_keys_product_id_created_at')
        .on('product_keys')
        .columns(['product_id', 'created_at'])
        .execute()
      await db.schema
        .createIndex('product_keys_one_current')
        .on('product_keys')
        .column('product_id')
        .unique()
        .where(sql.ref('retired_at'), 'is', null)
        .execute()

      await db.schema
        .createTable('licenses')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('product_id', 'text', (col) => col.notNull().references('products.id'))
        .addColumn('key', 'text', (col) => col.notNull().unique())
        .addColumn('max_activations', 'integer')
        .addColumn('expiration_date', types.timestamp)
        .addColumn('revoked_at', types.timestamp)
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addColumn('updated_at', types.timestamp, (col) => col.notNull())
        .execute()
      // The default order (createdAt desc, id) with and without a product scope.
      await db.schema
        .createIndex('licenses_created_at_id')
        .on('licenses')
        .columns(['created_at', 'id'])
        .execute()
      await db.schema
        .createIndex('licenses_product_id_created_at_id')
        .on('licenses')
        .columns(['product_id', 'created_at', 'id'])
        .execute()
      await db.schema
        .createIndex('licenses_product_id_updated_at_id')
        .on('licenses')
        .columns(['product_id', 'updated_at', 'id'])
        .execute()
      // Expiry drives the derived status, so status filters use it too.
      await db.schema
        .createIndex('licenses_product_id_expiration_date')
        .on('licenses')
        .columns(['product_id', 'expiration_date'])
        .execute()
      await db.schema
        .createIndex('licenses_expiration_date')
        .on('licenses')
        .column('expiration_date')
        .execute()

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('role', 'text', (col) => col.notNull().check(sql`role in ('admin', 'product', 'client')`))
        .addColumn('product_id', 'text', (col) => col.references('products.id'))
        .addColumn('digest', 'text', (col) => col.notNull().unique())
        .addColumn('prefix', 'text', (col) => col.notNull())
        .addColumn('created_at', types.timestamp, (col) => col.notNull())
        .addCheckConstraint('api_keys_role_product', sql`(role = 'admin') = (product_id is null)`)
        .execute()
      await db.schema
        .createIndex('api_keys_created_at_id')
        .on('api_keys')
        .columns(['created_at', 'id'])
        .execute()
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('api_keys').execute()
      await db.schema.dropTable('licenses').execute()
      await db.schema.dropTable('product_keys').execute()
      await db.schema.dropTable('products').execute()
    },
  }
}
