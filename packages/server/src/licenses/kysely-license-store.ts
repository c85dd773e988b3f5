import type { LicenseId, LicenseStatus } from '@keyturn/protocol'
import { type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely'
import type { FilterRule, FilterValue, ListSlice } from '../core/list-query.js'
import type { Database, LicensesTable } from '../storage/database.js'
import { toDate, toNullableDate } from '../storage/database.js'
import { column, columnOr, isStorableText, type ListTable, selectPage } from '../storage/list-sql.js'
import { writeTransaction } from '../storage/write-transaction.js'
import { expirationDateBound, type License } from './license.js'
import {
  type LicenseChanges,
  type LicenseFilterField,
  type LicenseListQuery,
  type LicenseSortField,
  type LicenseStore,
  licenseStatuses,
} from './license-store.js'

export type LicenseRow = Selectable<LicensesTable>

/** The only converter from a licenses row to the domain's license (the usage store reads the same rows). */
export function rowToLicense(row: LicenseRow): License {
  return {
    id: row.id,
    productId: row.product_id,
    key: row.key,
    maxActivations: row.max_activations === null ? null : Number(row.max_activations),
    expirationDate: toNullableDate(row.expiration_date),
    revokedAt: toNullableDate(row.revoked_at),
    activationCount: Number(row.activation_count),
    heartbeatTtl: row.heartbeat_ttl === null ? null : Number(row.heartbeat_ttl),
    maxUses: row.max_uses === null ? null : Number(row.max_uses), // pg reads bigint as a string
    uses: Number(row.uses),
    usesResetAt: toNullableDate(row.uses_reset_at),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

/**
 * Status is derived from `revoked_at` and `expiration_date` at `now`, so it sorts and filters as an
 * expression: 0 active, 1 expired, 2 revoked (also the alphabetical order of the names).
 */
function statusRank(alias: string, now: string): RawBuilder<unknown> {
  const revokedAt = sql.ref(`${alias}.revoked_at`)
  const expirationDate = sql.ref(`${alias}.expiration_date`)
  return sql`(case when ${revokedAt} is not null then 2 when ${expirationDate} <= ${now} then 1 else 0 end)`
}

/**
 * A status filter as conditions on the stored columns (no CASE), so the engines can use the indexes
 * on `revoked_at` and `expiration_date`: the statuses a rule allows, each as its definition.
 */
function statusCondition(rule: FilterRule<LicenseFilterField>, now: string): RawBuilder<SqlBool> {
  const named = (value: FilterValue): LicenseStatus => {
    if (!isStatus(value)) {
      throw new Error(`"${value}" is not a license status`) // parseFilter has checked it already
    }
    return value
  }
  const allowed: LicenseStatus[] =
    rule.operator === 'in'
      ? rule.values.map(named)
      : rule.operator === 'eq'
        ? [named(rule.value)]
        : rule.operator === 'ne'
          ? licenseStatuses.filter((status) => status !== named(rule.value))
          : []
  const revokedAt = sql.ref('licenses.revoked_at')
  const expirationDate = sql.ref('licenses.expiration_date')
  const has = (status: LicenseStatus) => allowed.includes(status)
  if (has('active') && has('expired') && has('revoked')) {
    return sql<SqlBool>`1 = 1`
  }
  if (has('active') && has('expired')) {
    return sql<SqlBool>`${revokedAt} is null`
  }
  const definitions: Record<LicenseStatus, RawBuilder<SqlBool>> = {
    revoked: sql<SqlBool>`${revokedAt} is not null`,
    expired: sql<SqlBool>`(${revokedAt} is null and ${expirationDate} is not null and ${expirationDate} <= ${now})`,
    active: sql<SqlBool>`(${revokedAt} is null and (${expirationDate} is null or ${expirationDate} > ${now}))`,
  }
  const conditions = licenseStatuses.filter(has).map((status) => definitions[status])
  return conditions.length === 0 ? sql<SqlBool>`1 = 0` : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`
}

const isStatus = (value: FilterValue): value is LicenseStatus =>
  licenseStatuses.some((status) => status === value)

function licenseTable(now: Date): ListTable<LicenseSortField, LicenseFilterField> {
  const at = now.toISOString()
  return {
    table: 'licenses',
    sort: {
      createdAt: column('created_at'),
      updatedAt: column('updated_at'),
      // null is "never expires": after every stored date, which all lie before the bound.
      expirationDate: columnOr('expiration_date', expirationDateBound.toISOString()),
      maxActivations: columnOr('max_activations', 2_147_483_647), // null is unlimited: the most
      key: column('key'),
      status: (alias) => statusRank(alias, at),
    },
    filters: {
      status: { translate: (rule) => statusCondition(rule, at) },
      productId: { column: 'product_id' },
      expirationDate: { column: 'expiration_date' },
      createdAt: { column: 'created_at' },
      updatedAt: { column: 'updated_at' },
      maxActivations: { column: 'max_activations' },
    },
  }
}

export class KyselyLicenseStore implements LicenseStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(license: License): Promise<void> {
    await this.#db
      .insertInto('licenses')
      .values({
        id: license.id,
        product_id: license.productId,
        key: license.key,
        max_activations: license.maxActivations,
        expiration_date: license.expirationDate?.toISOString() ?? null,
        revoked_at: license.revokedAt?.toISOString() ?? null,
        heartbeat_ttl: license.heartbeatTtl,
        max_uses: license.maxUses,
        uses: license.uses,
        uses_reset_at: license.usesResetAt?.toISOString() ?? null,
        created_at: license.createdAt.toISOString(),
        updated_at: license.updatedAt.toISOString(),
      })
      .execute()
  }

  async findById(id: LicenseId): Promise<License | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db.selectFrom('licenses').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : rowToLicense(row)
  }

  async findByKey(key: string): Promise<License | undefined> {
    if (!isStorableText(key)) {
      return undefined
    }
    const row = await this.#db.selectFrom('licenses').selectAll().where('key', '=', key).executeTakeFirst()
    return row === undefined ? undefined : rowToLicense(row)
  }

  async update(id: LicenseId, changes: LicenseChanges): Promise<License | undefined> {
    if (changes.heartbeatTtl === undefined) {
      return this.#update(this.#db, id, changes)
    }
    const heartbeatTtl = changes.heartbeatTtl
    return writeTransaction(this.#db, async (trx) => {
      const license = await this.#update(trx, id, changes) // locks the license row first (lock order)
      if (license !== undefined) {
        const now = changes.updatedAt.toISOString()
        await trx
          .updateTable('activations')
          .set({
            expires_at:
              heartbeatTtl === null
                ? null
                : new Date(changes.updatedAt.getTime() + heartbeatTtl * 1000).toISOString(),
          })
          .where('license_id', '=', id)
          .where(sql<SqlBool>`(expires_at is null or expires_at > ${now})`)
          .execute()
      }
      return license
    })
  }

  async #update(db: Kysely<Database>, id: LicenseId, changes: LicenseChanges): Promise<License | undefined> {
    const row = await db
      .updateTable('licenses')
      .set({
        updated_at: changes.updatedAt.toISOString(),
        ...(changes.maxActivations === undefined ? {} : { max_activations: changes.maxActivations }),
        ...(changes.expirationDate === undefined
          ? {}
          : { expiration_date: changes.expirationDate?.toISOString() ?? null }),
        ...(changes.revokedAt === undefined ? {} : { revoked_at: changes.revokedAt?.toISOString() ?? null }),
        ...(changes.heartbeatTtl === undefined ? {} : { heartbeat_ttl: changes.heartbeatTtl }),
        ...(changes.maxUses === undefined ? {} : { max_uses: changes.maxUses }),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? undefined : rowToLicense(row)
  }

  async list(query: LicenseListQuery): Promise<ListSlice<License>> {
    const scope =
      query.productId === undefined
        ? []
        : isStorableText(query.productId)
          ? [sql<SqlBool>`licenses.product_id = ${query.productId}`]
          : [sql<SqlBool>`1 = 0`] // no product has such an id
    const slice = await selectPage<LicenseRow, LicenseSortField, LicenseFilterField>(
      this.#db,
      licenseTable(query.now),
      query.request,
      scope,
    )
    return { ...slice, items: slice.items.map(rowToLicense) }
  }
}
