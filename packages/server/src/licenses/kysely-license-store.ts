import type { ApiKeyId, EntitlementId, LicenseId, LicenseStatus, ProductId } from '@keyturn/protocol'
import { type CompiledQuery, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely'
import type { FilterRule, ListSlice } from '../core/list-query.js'
import type { Event } from '../core/unit-of-work.js'
import { licenseKeyHint } from '../offline/offline-formats.js'
import { apiKeyLive, confirmedRow } from '../storage/api-key-confirmation.js'
import {
  isForeignKeyViolation,
  isNotNullViolation,
  isUniqueViolation,
  isUniqueViolationOf,
} from '../storage/constraint-violations.js'
import type { Database } from '../storage/database.js'
import { column, columnOr, isStorableText, type ListTable, selectPage } from '../storage/list-sql.js'
import { lockLicense } from '../storage/lock-license.js'
import { executeAsOne, runsAlone } from '../storage/one-statement.js'
import { type SqliteReader, sqliteReaderOf } from '../storage/sqlite-reader.js'
import { isSqlite, writeTransaction } from '../storage/write-transaction.js'
import { licenseHistogram } from './kysely-license-counts.js'
import {
  checkInOfRow,
  entitlementCodes,
  type LicenseRow,
  policyCheckIn,
  productUsable,
  rowToLicense,
} from './kysely-license-rows.js'
import {
  type ConfirmedRow,
  type ConfirmingRead,
  insertWrites,
  type LicenseInsert,
  type LicenseStatementGroups,
} from './kysely-license-statement-groups.js'
import { expirationDateBound, type License } from './license.js'
import {
  allowedStatuses,
  type LicenseChanges,
  type LicenseFilterField,
  type LicenseForUse,
  type LicenseGuard,
  type LicenseListQuery,
  type LicenseRef,
  type LicenseSortField,
  type LicenseStore,
  licenseStatuses,
  type NewLicense,
} from './license-store.js'

const jsonNumber = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/

/** What `<value>` may stand for: the string itself, and the number or boolean it spells, if any. */
function metadataValues(rule: FilterRule<LicenseFilterField>) {
  if (rule.operator !== 'eq' || rule.key === undefined) {
    throw new Error('metadata rules are key:eq:value') // parseFilter makes no other
  }
  const raw = String(rule.value)
  const number = jsonNumber.test(raw) && Number.isFinite(Number(raw)) ? Number(raw) : undefined
  const boolean = raw === 'true' ? true : raw === 'false' ? false : undefined
  return { key: rule.key, raw, number, boolean }
}

/**
 * Fast path (docs/decisions/0021-metadata-lookups.md): `metadata.<key>:eq:<value>` is answered one way for a value at most this
 * many licenses hold (a billing system's subscription id) and another for a common one (a plan
 * name); `#sparseMetadataRules` counts up to it first, through an index.
 * - SQLite, sparse: the licenses come from the license_metadata index (migration 2026-11-27-00) and
 *   are then sorted. At 1M licenses a lookup by subscription id took ~8 s of the server's one thread,
 *   reading every license's JSON; now well under a millisecond.
 * - SQLite, common: licenses are read in the list's order and their JSON checked, which stops at the
 *   page's end; through the index all of them would be sorted first (a value all 1M hold: 2.7 s
 *   instead of 0.4 ms).
 * - PostgreSQL, sparse: the ids of the licenses holding the value are collected first from the GIN
 *   index (migration 50), `id = any(array(…))`, with the value hidden from the planner
 *   (`(select $1::jsonb)`), so the named statement settles on one generic plan instead of being
 *   planned again for each value: that planning was 0.33 of the 0.46 ms PostgreSQL spent on a
 *   lookup. Hidden in a plain condition, the value would read as common, and PostgreSQL would walk
 *   the list's order looking for it (1.4 s at 1M).
 * - PostgreSQL, common: the GIN index or the list's order, as planned for the value.
 */
const sparseMetadataLimit = 10_000

/**
 * The condition a metadata rule puts on licenses: the stored value is the string `<value>`, or a
 * number equal to it, or the boolean it spells. `sparse`: see sparseMetadataLimit.
 */
function metadataCondition(
  rule: FilterRule<LicenseFilterField>,
  sqlite: boolean,
  sparse: boolean,
): RawBuilder<SqlBool> {
  if (!sparse) {
    return sqlite ? metadataInJson(rule) : metadataContains(rule, false)
  }
  return sqlite
    ? sql<SqlBool>`licenses.id in (select license_id from license_metadata where ${metadataEntry(rule)})`
    : sql<SqlBool>`licenses.id = any(array(select id from licenses where ${metadataContains(rule, true)}))`
}

/** PostgreSQL: `metadata @> {"key": value}` for each value `<value>` may stand for (GIN-indexed). */
function metadataContains(rule: FilterRule<LicenseFilterField>, hideValue: boolean): RawBuilder<SqlBool> {
  const { key, raw, number, boolean } = metadataValues(rule)
  const contains = (value: string | number | boolean) => {
    const json = JSON.stringify({ [key]: value })
    return hideValue
      ? sql<SqlBool>`licenses.metadata @> (select ${json}::jsonb)`
      : sql<SqlBool>`licenses.metadata @> ${json}::jsonb`
  }
  const alternatives = [
    contains(raw),
    ...(number === undefined ? [] : [contains(number)]),
    ...(boolean === undefined ? [] : [contains(boolean)]),
  ]
  return sql<SqlBool>`(${sql.join(alternatives, sql` or `)})`
}

/** SQLite: the rule checked on a license's JSON. */
function metadataInJson(rule: FilterRule<LicenseFilterField>): RawBuilder<SqlBool> {
  const { key, raw, number, boolean } = metadataValues(rule)
  const metadata = sql.ref('licenses.metadata')
  const path = `$."${key}"` // keys are [A-Za-z0-9_.-]: nothing to escape
  const alternatives = [
    sql<SqlBool>`(json_type(${metadata}, ${path}) = 'text' and json_extract(${metadata}, ${path}) = ${raw})`,
    ...(number === undefined
      ? []
      : [
          sql<SqlBool>`(json_type(${metadata}, ${path}) in ('integer', 'real') and json_extract(${metadata}, ${path}) = ${number})`,
        ]),
    ...(boolean === undefined ? [] : [sql<SqlBool>`json_type(${metadata}, ${path}) = ${String(boolean)}`]),
  ]
  return sql<SqlBool>`(${sql.join(alternatives, sql` or `)})`
}

/**
 * SQLite: the license_metadata rows a metadata rule matches. `value in (…)` lets the index
 * (key, value) be searched for each candidate; `value` keeps JSON's types, so the text "5" and the
 * number 5 never meet, and `type` tells a boolean's 1 from the number 1.
 */
function metadataEntry(rule: FilterRule<LicenseFilterField>): RawBuilder<SqlBool> {
  const { key, raw, number, boolean } = metadataValues(rule)
  const [type, value] = [sql.ref('license_metadata.type'), sql.ref('license_metadata.value')]
  const candidates: (string | number)[] = [raw]
  const types = [sql<SqlBool>`(${type} = 'text' and ${value} = ${raw})`]
  if (number !== undefined) {
    candidates.push(number)
    types.push(sql<SqlBool>`(${type} in ('integer', 'real') and ${value} = ${number})`)
  }
  if (boolean !== undefined) {
    candidates.push(boolean ? 1 : 0)
    types.push(sql<SqlBool>`${type} = ${String(boolean)}`)
  }
  return sql<SqlBool>`license_metadata.key = ${key} and ${value} in (${sql.join(candidates)})
    and (${sql.join(types, sql` or `)})`
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
  const allowed = allowedStatuses(rule)
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

function licenseTable(
  now: Date,
  sqlite: boolean,
  sparseMetadata: ReadonlySet<FilterRule<LicenseFilterField>>,
): ListTable<LicenseSortField, LicenseFilterField> {
  const at = now.toISOString()
  return {
    table: 'licenses',
    columns: entitlementCodes(sqlite),
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
      customerId: { column: 'customer_id' },
      policyId: { column: 'policy_id' },
      metadata: {
        translate: (rule) => metadataCondition(rule, sqlite, sparseMetadata.has(rule)),
      },
    },
  }
}

/** A confirming read of the caller: `apiKeyId` undefined for a signed-in operator (nothing to confirm). */
type CallerRead = Omit<ConfirmingRead, 'apiKeyId'> & { readonly apiKeyId: ApiKeyId | undefined }

type ConfirmingRow = ConfirmedRow & { api_key_live: number | null }

/** Where a confirming read's license key or id, and its API key's id, go in the reader's statement. */
const valueSlot = Symbol('value')
const apiKeySlot = Symbol('apiKeyId')

export class KyselyLicenseStore implements LicenseStore {
  readonly #db: Kysely<Database>
  readonly #sqlite: boolean
  readonly #codes: RawBuilder<unknown>
  readonly #groups: LicenseStatementGroups | undefined
  /** SQLite files, outside transactions: validation's read, without Kysely (storage/sqlite-reader.ts). */
  readonly #reader: SqliteReader | undefined
  readonly #readerStatements = new Map<string, CompiledQuery>()

  /** `groups`: shared by the app's stores, so that their requests on PostgreSQL share statements. */
  constructor(db: Kysely<Database>, groups?: LicenseStatementGroups) {
    this.#db = db
    this.#groups = groups
    this.#reader = sqliteReaderOf(db)
    this.#sqlite = isSqlite(db)
    this.#codes = entitlementCodes(this.#sqlite)
  }

  async insert(
    license: NewLicense,
    entitlementIds: readonly EntitlementId[],
    events: readonly Event[],
    onlyFor?: { readonly apiKeyId: ApiKeyId | undefined },
  ): Promise<'ok' | 'reference_gone' | 'product_refused' | 'key_taken' | 'external_id_taken'> {
    const row = {
      id: license.id,
      product_id:
        onlyFor === undefined ? license.productId : usableProductId(license.productId, onlyFor.apiKeyId),
      key: license.key,
      key_hint: licenseKeyHint(license.key),
      max_activations: license.maxActivations,
      expiration_date: license.expirationDate?.toISOString() ?? null,
      revoked_at: license.revokedAt?.toISOString() ?? null,
      customer_id: license.customerId,
      policy_id: license.policyId,
      metadata: JSON.stringify(license.metadata),
      first_activation_duration: license.firstActivationDuration,
      external_id: license.externalId,
      // 0, except for an imported license inserted with its machines (ActivationStore.insertImported).
      activation_count: license.activationCount,
      heartbeat_ttl: license.heartbeatTtl,
      max_uses: license.maxUses,
      uses: license.uses,
      uses_reset_at: license.usesResetAt?.toISOString() ?? null,
      created_at: license.createdAt.toISOString(),
      updated_at: license.updatedAt.toISOString(),
    }
    const insert: LicenseInsert = {
      row,
      links: entitlementIds.map((entitlementId) => ({
        license_id: license.id,
        entitlement_id: entitlementId,
      })),
      events,
    }
    try {
      if (!runsAlone(this.#db)) {
        await writeTransaction(this.#db, async (trx) => {
          for (const write of insertWrites(trx, [insert])) {
            await write.execute()
          }
        })
      } else if (this.#groups !== undefined) {
        await this.#groups.insert(insert)
      } else {
        await executeAsOne(this.#db, insertWrites(this.#db, [insert]))
      }
      return 'ok'
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        return 'reference_gone'
      }
      if (onlyFor !== undefined && isNotNullViolation(error)) {
        return 'product_refused'
      }
      if (isUniqueViolationOf(error, 'external_id')) {
        return 'external_id_taken'
      }
      if (isUniqueViolation(error)) {
        return 'key_taken' // a key given by the request (a generated one has 125 random bits)
      }
      throw error
    }
  }

  async find(which: LicenseRef): Promise<License | undefined> {
    const [column, value] = columnOf(which)
    if (!isStorableText(value)) {
      return undefined
    }
    return this.#findOne(sql<SqlBool>`${sql.ref(`licenses.${column}`)} = ${value}`, this.#db)
  }

  async findByExternalId(productId: ProductId, externalId: string): Promise<License | undefined> {
    if (!isStorableText(productId) || !isStorableText(externalId)) {
      return undefined
    }
    return this.#findOne(
      sql<SqlBool>`licenses.product_id = ${productId} and licenses.external_id = ${externalId}`,
      this.#db,
    )
  }

  async findExternalIds(
    productId: ProductId,
    externalIds: readonly string[],
  ): Promise<ReadonlyMap<string, { readonly id: LicenseId; readonly key: string }>> {
    const found = new Map<string, { readonly id: LicenseId; readonly key: string }>()
    const asked = externalIds.filter(isStorableText)
    for (let start = 0; start < asked.length; start += 500) {
      const rows = await this.#db
        .selectFrom('licenses')
        .select(['id', 'key', 'external_id'])
        .where('product_id', '=', productId)
        .where('external_id', 'in', asked.slice(start, start + 500))
        .execute()
      for (const row of rows) {
        if (row.external_id !== null) {
          found.set(row.external_id, { id: row.id, key: row.key })
        }
      }
    }
    return found
  }

  async findForUpdate(id: LicenseId): Promise<License | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    await lockLicense(this.#db, id)
    return this.#findOne(sql<SqlBool>`licenses.id = ${id}`, this.#db)
  }

  findForCaller(
    which: LicenseRef,
    caller: ApiKeyId | undefined,
    purpose: 'view',
  ): Promise<License | 'api_key_gone' | undefined>
  findForCaller(
    which: LicenseRef,
    caller: ApiKeyId | undefined,
    purpose: 'use',
  ): Promise<LicenseForUse | 'api_key_gone' | undefined>
  async findForCaller(
    which: LicenseRef,
    caller: ApiKeyId | undefined,
    purpose: 'view' | 'use',
  ): Promise<License | LicenseForUse | 'api_key_gone' | undefined> {
    const [column, value] = columnOf(which)
    // A view needs no product: its statement stays the license and the key (retrieve ≥ validate).
    const withProduct = purpose === 'use'
    const found = await this.#findConfirming({ column, value, apiKeyId: caller, withProduct })
    return withProduct || typeof found !== 'object' ? found : found.license
  }

  /**
   * Fast path (docs/decisions/0016-api-key-confirmation.md): a validation read the API key, the license, then its product (three
   * statements, three round trips on PostgreSQL); this one joins the product's suspension and the
   * API key's existence in by primary key. Reading them in one statement also means one snapshot:
   * no suspension or key deletion can fall between the reads. On PostgreSQL, the reads that arrive
   * together share that statement (LicenseStatementGroups).
   */
  async #findConfirming(read: CallerRead): Promise<LicenseForUse | 'api_key_gone' | undefined> {
    const found = (row: ConfirmedRow): LicenseForUse => ({
      license: rowToLicense(row),
      productUsable: row.product_usable !== null,
      policyCheckIn: checkInOfRow(row),
    })
    if (!isStorableText(read.value)) {
      // Text no license can hold; the key is still confirmed.
      return confirmedRow(this.#db, [], read.apiKeyId, found)
    }
    if (this.#groups !== undefined && runsAlone(this.#db) && read.apiKeyId !== undefined) {
      const { row, apiKeyLive } = await this.#groups.findConfirming({ ...read, apiKeyId: read.apiKeyId })
      return !apiKeyLive ? 'api_key_gone' : row === undefined ? undefined : found(row)
    }
    if (this.#reader !== undefined) {
      const { sql: text, parameters } = this.#readerStatement(read)
      const row = this.#reader.get<ConfirmingRow>(
        text,
        parameters.map((parameter) =>
          parameter === valueSlot ? read.value : parameter === apiKeySlot ? read.apiKeyId : parameter,
        ),
      )
      return confirmedRow(this.#db, row === undefined ? [] : [row], read.apiKeyId, found)
    }
    const { rows } = await this.#confirmingStatement(read).execute(this.#db)
    return confirmedRow(this.#db, rows, read.apiKeyId, found)
  }

  /** The license, its codes, product and policy fields, and whether the caller's key exists: one statement. */
  #confirmingStatement(read: CallerRead): RawBuilder<ConfirmingRow> {
    return sql<ConfirmingRow>`
      select licenses.*, ${this.#codes},
        ${productUsable(read.withProduct)} as product_usable, ${apiKeyLive(read.apiKeyId)} as api_key_live,
        ${policyCheckIn(read.withProduct)}
      from licenses where ${sql.ref(`licenses.${read.column}`)} = ${read.value}`
  }

  /**
   * SQLite's reader (storage/sqlite-reader.ts) runs `#confirmingStatement`'s text, compiled once per
   * shape with placeholders (`valueSlot`, `apiKeySlot`) where the request's values go.
   */
  #readerStatement(read: CallerRead): CompiledQuery {
    const shape = `${read.column} ${read.withProduct} ${read.apiKeyId === undefined}`
    let compiled = this.#readerStatements.get(shape)
    if (compiled === undefined) {
      compiled = this.#confirmingStatement({
        ...read,
        value: valueSlot as unknown as string,
        apiKeyId: read.apiKeyId === undefined ? undefined : (apiKeySlot as unknown as ApiKeyId),
      }).compile(this.#db)
      this.#readerStatements.set(shape, compiled)
    }
    return compiled
  }

  async #findOne(where: RawBuilder<SqlBool>, db: Kysely<Database>): Promise<License | undefined> {
    const { rows } =
      await sql<LicenseRow>`select licenses.*, ${this.#codes} from licenses where ${where}`.execute(db)
    const [row] = rows
    return row === undefined ? undefined : rowToLicense(row)
  }

  async update(
    id: LicenseId,
    changes: LicenseChanges,
    guard?: LicenseGuard,
  ): Promise<License | 'conflict' | 'reference_gone' | undefined> {
    const set = {
      updated_at: changes.updatedAt.toISOString(),
      ...(changes.maxActivations === undefined ? {} : { max_activations: changes.maxActivations }),
      ...(changes.expirationDate === undefined
        ? {}
        : { expiration_date: changes.expirationDate?.toISOString() ?? null }),
      ...(changes.revokedAt === undefined ? {} : { revoked_at: changes.revokedAt?.toISOString() ?? null }),
      ...(changes.heartbeatTtl === undefined ? {} : { heartbeat_ttl: changes.heartbeatTtl }),
      ...(changes.maxUses === undefined ? {} : { max_uses: changes.maxUses }),
      ...(changes.customerId === undefined ? {} : { customer_id: changes.customerId }),
      ...(changes.policyId === undefined ? {} : { policy_id: changes.policyId }),
      ...(changes.metadata === undefined ? {} : { metadata: JSON.stringify(changes.metadata) }),
      ...(changes.firstActivationDuration === undefined
        ? {}
        : { first_activation_duration: changes.firstActivationDuration }),
      ...(changes.paymentGraceEndsAt === undefined
        ? {}
        : { payment_grace_ends_at: changes.paymentGraceEndsAt?.toISOString() ?? null }),
    }
    try {
      return await writeTransaction(this.#db, async (trx) => {
        let query = trx.updateTable('licenses').set(set).where('id', '=', id)
        if (guard !== undefined) {
          const { expirationDate, firstActivationDuration } = guard
          query = query
            .where(
              'expiration_date',
              expirationDate === null ? 'is' : '=',
              expirationDate?.toISOString() ?? null,
            )
            .where(
              'first_activation_duration',
              firstActivationDuration === null ? 'is' : '=',
              firstActivationDuration,
            )
        }
        const updated = await query.returning('id').executeTakeFirst()
        if (updated === undefined) {
          if (guard === undefined) {
            return undefined
          }
          const exists = await trx.selectFrom('licenses').select('id').where('id', '=', id).executeTakeFirst()
          return exists === undefined ? undefined : 'conflict'
        }
        if (changes.heartbeatTtl !== undefined) {
          // A new lease length renews the alive activations' leases under the new terms (null: they
          // never lapse); lapsed ones stay lapsed. The license row is locked first (lock order).
          const heartbeatTtl = changes.heartbeatTtl
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
        if (changes.entitlementIds !== undefined) {
          await trx.deleteFrom('license_entitlements').where('license_id', '=', id).execute()
          if (changes.entitlementIds.length > 0) {
            await trx
              .insertInto('license_entitlements')
              .values(
                changes.entitlementIds.map((entitlementId) => ({
                  license_id: id,
                  entitlement_id: entitlementId,
                })),
              )
              .execute()
          }
        }
        return this.#findOne(sql<SqlBool>`licenses.id = ${id}`, trx)
      })
    } catch (error) {
      if (isForeignKeyViolation(error)) {
        return 'reference_gone'
      }
      throw error
    }
  }

  async list(query: LicenseListQuery): Promise<ListSlice<License>> {
    const byProduct =
      query.productId === undefined
        ? []
        : isStorableText(query.productId)
          ? [sql<SqlBool>`licenses.product_id = ${query.productId}`]
          : [sql<SqlBool>`1 = 0`] // no product has such an id
    const byExternalId =
      query.externalId === undefined
        ? []
        : isStorableText(query.externalId)
          ? [sql<SqlBool>`licenses.external_id = ${query.externalId}`]
          : [sql<SqlBool>`1 = 0`]
    const scope = [...byProduct, ...byExternalId]
    const slice = await selectPage<LicenseRow, LicenseSortField, LicenseFilterField>(
      this.#db,
      licenseTable(query.now, this.#sqlite, await this.#sparseMetadataRules(query.request.filters, scope)),
      query.request,
      scope,
      // The daily counts know products, not external ids: a list by externalId is counted directly.
      query.externalId === undefined
        ? await licenseHistogram(this.#db, query.request, query.productId, query.now)
        : undefined,
    )
    return { ...slice, items: slice.items.map(rowToLicense) }
  }

  /**
   * The metadata rules whose value at most sparseMetadataLimit licenses hold (an index count each),
   * among the licenses `scope` lets the caller see: how long a lookup takes says nothing of other
   * products' licenses.
   */
  async #sparseMetadataRules(
    filters: readonly FilterRule<LicenseFilterField>[],
    scope: readonly RawBuilder<SqlBool>[],
  ): Promise<ReadonlySet<FilterRule<LicenseFilterField>>> {
    const sparse = new Set<FilterRule<LicenseFilterField>>()
    for (const rule of filters) {
      if (rule.field !== 'metadata') {
        continue
      }
      const holders = this.#sqlite
        ? sql`select 1 from license_metadata join licenses on licenses.id = license_metadata.license_id
            where ${sql.join([metadataEntry(rule), ...scope], sql` and `)}`
        : sql`select 1 from licenses where ${sql.join([metadataContains(rule, false), ...scope], sql` and `)}`
      const { rows } = await sql<{ count: number | string }>`select count(*) as count from (
          ${holders} limit ${sparseMetadataLimit + 1}) as holders`.execute(this.#db)
      if (Number(rows[0]?.count ?? 0) <= sparseMetadataLimit) {
        sparse.add(rule)
      }
    }
    return sparse
  }
}

/**
 * The product's id when the product is active and the API key still exists, else null, which the
 * licenses' NOT NULL refuses: the whole statement fails and writes nothing (LicenseStore.insert's
 * `onlyFor`). Two primary-key probes in the insert's own snapshot, in place of a read before it.
 */
function usableProductId(productId: ProductId, apiKeyId: ApiKeyId | undefined): RawBuilder<ProductId> {
  return sql<ProductId>`(select products.id from products where products.id = ${productId} and products.suspended_at is null and ${apiKeyLive(apiKeyId)} is not null)`
}

/** The column a read by `which` looks up, and the value it looks for. */
function columnOf(which: LicenseRef): readonly ['id' | 'key', string] {
  return 'id' in which ? ['id', which.id] : ['key', which.key]
}
