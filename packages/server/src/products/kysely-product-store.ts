import { type ApiKeyId, noBranding, type ProductBranding, type ProductId } from '@keyturn/protocol'
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { ListSlice } from '../core/list-query.js'
import { apiKeyLive, confirmedRow } from '../storage/api-key-confirmation.js'
import type { Database, ProductKeysTable, ProductsTable } from '../storage/database.js'
import { toDate, toNullableDate } from '../storage/database.js'
import { readMetadata } from '../storage/json.js'
import { column, foldedText, isStorableText, type ListTable, selectPage } from '../storage/list-sql.js'
import { writeTransaction } from '../storage/write-transaction.js'
import type { SigningKeyRecord } from '../tokens/signing-keys.js'
import type { Product, ProductPublicKey, ProductView } from './product.js'
import type {
  ProductChanges,
  ProductFilterField,
  ProductListQuery,
  ProductSortField,
  ProductStore,
} from './product-store.js'

type ProductRow = Selectable<ProductsTable>
type ProductKeyRow = Pick<Selectable<ProductKeysTable>, 'id' | 'product_id' | 'public_key_pem' | 'created_at'>

/** Stored branding over the empty one: a field added later reads as null in older rows. */
function readBranding(json: string | null): ProductBranding {
  return json === null ? noBranding : { ...noBranding, ...(JSON.parse(json) as Partial<ProductBranding>) }
}

function rowToProduct(row: ProductRow): Product {
  return {
    id: row.id,
    name: row.name,
    suspendedAt: toNullableDate(row.suspended_at),
    clientTokenTtl: row.client_token_ttl,
    signResponses: row.sign_responses === 1,
    branding: readBranding(row.branding),
    metadata: readMetadata(row.metadata),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

function rowToPublicKey(row: ProductKeyRow): ProductPublicKey {
  return {
    keyId: row.id,
    productId: row.product_id,
    publicKeyPem: row.public_key_pem,
    createdAt: toDate(row.created_at),
  }
}

const productTable: ListTable<ProductSortField, ProductFilterField> = {
  table: 'products',
  sort: {
    createdAt: column('created_at'),
    updatedAt: column('updated_at'),
    // Case-insensitive, as people read names, and the same on both engines.
    name: foldedText('name'),
  },
  filters: {
    status: {
      translate: (rule) => {
        const suspended = (value: string | number) =>
          value === 'suspended' ? sql`is not null` : sql`is null`
        switch (rule.operator) {
          case 'eq':
            return sql<SqlBool>`products.suspended_at ${suspended(rule.value)}`
          case 'ne':
            return sql<SqlBool>`products.suspended_at ${suspended(rule.value === 'suspended' ? 'active' : 'suspended')}`
          case 'in':
            return sql<SqlBool>`(${sql.join(
              rule.values.map((value) => sql`products.suspended_at ${suspended(value)}`),
              sql` or `,
            )})`
          default:
            throw new Error(`status does not support ${rule.operator}`) // parseFilter allows only eq, ne, in
        }
      },
    },
    createdAt: { column: 'created_at' },
    updatedAt: { column: 'updated_at' },
    name: { column: 'name' },
  },
}

export class KyselyProductStore implements ProductStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(product: Product, key: SigningKeyRecord): Promise<ProductView> {
    await writeTransaction(this.#db, async (trx) => {
      await trx
        .insertInto('products')
        .values({
          id: product.id,
          name: product.name,
          suspended_at: null,
          client_token_ttl: product.clientTokenTtl,
          sign_responses: product.signResponses ? 1 : 0,
          branding: JSON.stringify(product.branding),
          metadata: JSON.stringify(product.metadata),
          created_at: product.createdAt.toISOString(),
          updated_at: product.updatedAt.toISOString(),
        })
        .execute()
      await trx
        .insertInto('product_keys')
        .values({
          id: key.keyId,
          product_id: product.id,
          public_key_pem: key.publicKeyPem,
          private_key_encrypted: key.privateKeyEncrypted,
          created_at: product.createdAt.toISOString(),
          retired_at: null,
        })
        .execute()
    })
    return {
      product,
      currentKey: {
        keyId: key.keyId,
        productId: product.id,
        publicKeyPem: key.publicKeyPem,
        createdAt: product.createdAt,
      },
    }
  }

  async findProductOnly(id: ProductId): Promise<Product | undefined> {
    const row = await this.#db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : rowToProduct(row)
  }

  async findProductConfirming(
    id: ProductId,
    apiKeyId: ApiKeyId | undefined,
  ): Promise<Product | 'api_key_gone' | undefined> {
    const rows = isStorableText(id)
      ? await this.#db
          .selectFrom('products')
          .selectAll()
          .select(apiKeyLive(apiKeyId).as('api_key_live'))
          .where('id', '=', id)
          .execute()
      : []
    return confirmedRow(this.#db, rows, apiKeyId, rowToProduct)
  }

  async findById(id: ProductId): Promise<ProductView | undefined> {
    const row = await this.#db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : (await this.#withKeys([row]))[0]
  }

  async update(id: ProductId, changes: ProductChanges): Promise<ProductView | undefined> {
    const row = await this.#db
      .updateTable('products')
      .set({
        updated_at: changes.updatedAt.toISOString(),
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.metadata === undefined ? {} : { metadata: JSON.stringify(changes.metadata) }),
        ...(changes.suspendedAt === undefined
          ? {}
          : { suspended_at: changes.suspendedAt?.toISOString() ?? null }),
        ...(changes.clientTokenTtl === undefined ? {} : { client_token_ttl: changes.clientTokenTtl }),
        ...(changes.signResponses === undefined ? {} : { sign_responses: changes.signResponses ? 1 : 0 }),
        ...(changes.branding === undefined ? {} : { branding: JSON.stringify(changes.branding) }),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? undefined : (await this.#withKeys([row]))[0]
  }

  async list(query: ProductListQuery): Promise<ListSlice<ProductView>> {
    const scope = query.productId === undefined ? [] : [sql<SqlBool>`products.id = ${query.productId}`]
    const slice = await selectPage<ProductRow, ProductSortField, ProductFilterField>(
      this.#db,
      productTable,
      query.request,
      scope,
    )
    return { ...slice, items: await this.#withKeys(slice.items) }
  }

  /** Attaches each product's current public key, in one query. */
  async #withKeys(rows: ProductRow[]): Promise<ProductView[]> {
    if (rows.length === 0) {
      return []
    }
    const keys = await this.#db
      .selectFrom('product_keys')
      .select(['id', 'product_id', 'public_key_pem', 'created_at'])
      .where(
        'product_id',
        'in',
        rows.map((row) => row.id),
      )
      .where('retired_at', 'is', null)
      .execute()
    const current = new Map(keys.map((key) => [key.product_id, rowToPublicKey(key)]))
    return rows.map((row) => {
      const currentKey = current.get(row.id)
      if (currentKey === undefined) {
        throw new Error(`Product ${row.id} has no signing key`) // inserted together, so a broken database
      }
      return { product: rowToProduct(row), currentKey }
    })
  }
}
