import type { ApiKeyId } from '@keyturn/protocol'
import { type Kysely, type Selectable, sql } from 'kysely'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import type { ApiKeysTable, Database } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import { column, foldedText, type ListTable, selectPage } from '../storage/list-sql.js'
import { isSqlite, writeTransaction } from '../storage/write-transaction.js'
import type { ApiKey } from './api-key.js'
import type { ApiKeyFilterField, ApiKeySortField, ApiKeyStore } from './api-key-store.js'

type ApiKeyRow = Selectable<ApiKeysTable>

function rowToApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    productId: row.product_id,
    digest: row.digest,
    prefix: row.prefix,
    createdAt: toDate(row.created_at),
  }
}

const apiKeyTable: ListTable<ApiKeySortField, ApiKeyFilterField> = {
  table: 'api_keys',
  sort: {
    createdAt: column('created_at'),
    name: foldedText('name'), // case-insensitive, as products sort
  },
  filters: {
    role: { column: 'role' },
    productId: { column: 'product_id' },
    createdAt: { column: 'created_at' },
  },
}

export class KyselyApiKeyStore implements ApiKeyStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(apiKey: ApiKey): Promise<void> {
    await this.#db
      .insertInto('api_keys')
      .values({
        id: apiKey.id,
        name: apiKey.name,
        role: apiKey.role,
        product_id: apiKey.productId,
        digest: apiKey.digest,
        prefix: apiKey.prefix,
        created_at: apiKey.createdAt.toISOString(),
      })
      .execute()
  }

  async findById(id: ApiKeyId): Promise<ApiKey | undefined> {
    const row = await this.#db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : rowToApiKey(row)
  }

  async findByDigest(digest: string): Promise<ApiKey | undefined> {
    const row = await this.#db
      .selectFrom('api_keys')
      .selectAll()
      .where('digest', '=', digest)
      .executeTakeFirst()
    return row === undefined ? undefined : rowToApiKey(row)
  }

  async delete(id: ApiKeyId): Promise<boolean> {
    const result = await this.#db.deleteFrom('api_keys').where('id', '=', id).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  async list(request: ListRequest<ApiKeySortField, ApiKeyFilterField>): Promise<ListSlice<ApiKey>> {
    const slice = await selectPage<ApiKeyRow, ApiKeySortField, ApiKeyFilterField>(
      this.#db,
      apiKeyTable,
      request,
      [],
    )
    return { ...slice, items: slice.items.map(rowToApiKey) }
  }

  async insertUnless(apiKey: ApiKey, condition: 'digest' | 'anyAdmin'): Promise<boolean> {
    return writeTransaction(this.#db, async (trx) => {
      // Serialises concurrent first starts on PostgreSQL (SQLite's BEGIN IMMEDIATE already does).
      if (!isSqlite(trx)) {
        await sql`select pg_advisory_xact_lock(hashtext('keyturn:bootstrap-admin'))`.execute(trx)
      }
      const existing = trx.selectFrom('api_keys').select('id')
      const found = await (condition === 'digest'
        ? existing.where('digest', '=', apiKey.digest)
        : existing.where('role', '=', 'admin')
      )
        .limit(1)
        .executeTakeFirst()
      if (found !== undefined) {
        return false
      }
      await new KyselyApiKeyStore(trx).insert(apiKey)
      return true
    })
  }

  async hasAdminKey(): Promise<boolean> {
    const row = await this.#db
      .selectFrom('api_keys')
      .select('id')
      .where('role', '=', 'admin')
      .limit(1)
      .executeTakeFirst()
    return row !== undefined
  }
}
