import type { EntitlementId, ProductId } from '@keyturn/protocol'
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import { isUniqueViolation } from '../storage/constraint-violations.js'
import type { Database, EntitlementsTable } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import {
  bytewise,
  column,
  foldedText,
  isStorableText,
  type ListTable,
  selectPage,
} from '../storage/list-sql.js'
import type { Entitlement } from './entitlement.js'
import type {
  EntitlementChanges,
  EntitlementFilterField,
  EntitlementSortField,
  EntitlementStore,
  EntitlementWrite,
} from './entitlement-store.js'

type EntitlementRow = Selectable<EntitlementsTable>

function rowToEntitlement(row: EntitlementRow): Entitlement {
  return {
    id: row.id,
    productId: row.product_id,
    code: row.code,
    name: row.name,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

const entitlementTable: ListTable<EntitlementSortField, EntitlementFilterField> = {
  table: 'entitlements',
  sort: {
    createdAt: column('created_at'),
    code: bytewise('code'),
    name: foldedText('name'),
  },
  filters: {
    code: { column: 'code' },
    productId: { column: 'product_id' },
    createdAt: { column: 'created_at' },
  },
}

export class KyselyEntitlementStore implements EntitlementStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(entitlement: Entitlement): Promise<EntitlementWrite> {
    const row = await this.#db
      .insertInto('entitlements')
      .values({
        id: entitlement.id,
        product_id: entitlement.productId,
        code: entitlement.code,
        name: entitlement.name,
        created_at: entitlement.createdAt.toISOString(),
        updated_at: entitlement.updatedAt.toISOString(),
      })
      .onConflict((conflict) => conflict.columns(['product_id', 'code']).doNothing())
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? { kind: 'code_taken' } : { kind: 'ok', entitlement: rowToEntitlement(row) }
  }

  async findById(id: EntitlementId): Promise<Entitlement | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db.selectFrom('entitlements').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : rowToEntitlement(row)
  }

  async findByCodes(productId: ProductId, codes: readonly string[]): Promise<Entitlement[]> {
    if (codes.length === 0) {
      return []
    }
    const rows = await this.#db
      .selectFrom('entitlements')
      .selectAll()
      .where('product_id', '=', productId)
      .where('code', 'in', [...codes])
      .execute()
    return rows.map(rowToEntitlement)
  }

  async update(id: EntitlementId, changes: EntitlementChanges): Promise<EntitlementWrite | undefined> {
    try {
      const row = await this.#db
        .updateTable('entitlements')
        .set({
          updated_at: changes.updatedAt.toISOString(),
          ...(changes.code === undefined ? {} : { code: changes.code }),
          ...(changes.name === undefined ? {} : { name: changes.name }),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst()
      return row === undefined ? undefined : { kind: 'ok', entitlement: rowToEntitlement(row) }
    } catch (error) {
      if (isUniqueViolation(error)) {
        return { kind: 'code_taken' }
      }
      throw error
    }
  }

  async delete(id: EntitlementId): Promise<boolean> {
    // The links would cascade; deleted first, they are locked in the order every writer of links
    // takes (links, then the entitlement's row for their foreign key), so a license or policy whose
    // entitlements are replaced meanwhile waits or is refused instead of deadlocking with this.
    await this.#db.deleteFrom('license_entitlements').where('entitlement_id', '=', id).execute()
    await this.#db.deleteFrom('policy_entitlements').where('entitlement_id', '=', id).execute()
    const deleted = await this.#db.deleteFrom('entitlements').where('id', '=', id).executeTakeFirst()
    return deleted.numDeletedRows > 0n
  }

  async list(
    request: ListRequest<EntitlementSortField, EntitlementFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<Entitlement>> {
    const scope = productId === undefined ? [] : [sql<SqlBool>`entitlements.product_id = ${productId}`]
    const slice = await selectPage<EntitlementRow, EntitlementSortField, EntitlementFilterField>(
      this.#db,
      entitlementTable,
      request,
      scope,
    )
    return { ...slice, items: slice.items.map(rowToEntitlement) }
  }
}
