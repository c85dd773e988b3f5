import type { EntitlementId, PolicyId, ProductId } from '@keyturn/protocol'
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import { isForeignKeyViolation } from '../storage/constraint-violations.js'
import type { Database, PoliciesTable } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import { readMetadata } from '../storage/json.js'
import { column, foldedText, isStorableText, type ListTable, selectPage } from '../storage/list-sql.js'
import { writeTransaction } from '../storage/write-transaction.js'
import type { CheckInPolicy } from './check-in.js'
import type { Policy } from './policy.js'
import type { PolicyChanges, PolicyFilterField, PolicySortField, PolicyStore } from './policy-store.js'

type PolicyRow = Selectable<PoliciesTable>

function rowToPolicy(row: PolicyRow, entitlements: readonly string[]): Policy {
  return {
    id: row.id,
    productId: row.product_id,
    name: row.name,
    maxActivations: row.max_activations === null ? null : Number(row.max_activations),
    duration: row.duration === null ? null : Number(row.duration),
    expirationBasis: row.expiration_basis === 'firstActivation' ? 'firstActivation' : 'creation',
    heartbeatTtl: row.heartbeat_ttl === null ? null : Number(row.heartbeat_ttl),
    maxUses: row.max_uses === null ? null : Number(row.max_uses), // pg reads bigint as a string
    entitlements,
    metadata: readMetadata(row.metadata),
    licenseFileTtl: row.license_file_ttl === null ? null : Number(row.license_file_ttl),
    tokenTtlMax: row.token_ttl_max === null ? null : Number(row.token_ttl_max),
    licenseFileMetadata: Number(row.license_file_metadata) === 1,
    seatsPerQuantity: Number(row.seats_per_quantity) === 1,
    maxTransfers: row.max_transfers === null ? null : Number(row.max_transfers),
    transferPeriod: Number(row.transfer_period),
    checkInInterval: row.check_in_interval === null ? null : Number(row.check_in_interval),
    gracePeriod: row.grace_period === null ? null : Number(row.grace_period),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

const policyTable: ListTable<PolicySortField, PolicyFilterField> = {
  table: 'policies',
  sort: {
    createdAt: column('created_at'),
    updatedAt: column('updated_at'),
    name: foldedText('name'),
  },
  filters: {
    productId: { column: 'product_id' },
    createdAt: { column: 'created_at' },
    updatedAt: { column: 'updated_at' },
  },
}

async function replaceEntitlements(
  trx: Kysely<Database>,
  policyId: PolicyId,
  entitlementIds: readonly EntitlementId[],
): Promise<void> {
  await trx.deleteFrom('policy_entitlements').where('policy_id', '=', policyId).execute()
  if (entitlementIds.length > 0) {
    await trx
      .insertInto('policy_entitlements')
      .values(entitlementIds.map((entitlementId) => ({ policy_id: policyId, entitlement_id: entitlementId })))
      .execute()
  }
}

/**
 * `work`'s result, or 'reference_gone' when the database refused a reference: an entitlement the
 * caller resolved was deleted before the write (the links' foreign key), which was a 500.
 */
async function referencesHeld<T>(work: () => Promise<T>): Promise<T | 'reference_gone'> {
  try {
    return await work()
  } catch (error) {
    if (isForeignKeyViolation(error)) {
      return 'reference_gone'
    }
    throw error
  }
}

export class KyselyPolicyStore implements PolicyStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(
    policy: Omit<Policy, 'entitlements'>,
    entitlementIds: readonly EntitlementId[],
  ): Promise<Policy | 'reference_gone'> {
    const written = await referencesHeld(() =>
      writeTransaction(this.#db, async (trx) => {
        await trx
          .insertInto('policies')
          .values({
            id: policy.id,
            product_id: policy.productId,
            name: policy.name,
            max_activations: policy.maxActivations,
            duration: policy.duration,
            expiration_basis: policy.expirationBasis,
            heartbeat_ttl: policy.heartbeatTtl,
            max_uses: policy.maxUses,
            metadata: JSON.stringify(policy.metadata),
            license_file_ttl: policy.licenseFileTtl,
            token_ttl_max: policy.tokenTtlMax,
            license_file_metadata: policy.licenseFileMetadata ? 1 : 0,
            seats_per_quantity: policy.seatsPerQuantity ? 1 : 0,
            max_transfers: policy.maxTransfers,
            check_in_interval: policy.checkInInterval,
            grace_period: policy.gracePeriod,
            transfer_period: policy.transferPeriod,
            created_at: policy.createdAt.toISOString(),
            updated_at: policy.updatedAt.toISOString(),
          })
          .execute()
        await replaceEntitlements(trx, policy.id, entitlementIds)
      }),
    )
    if (written === 'reference_gone') {
      return written
    }
    const stored = await this.findById(policy.id)
    if (stored === undefined) {
      throw new Error(`Policy ${policy.id} vanished after its insert`)
    }
    return stored
  }

  async findById(id: PolicyId): Promise<Policy | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db.selectFrom('policies').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : (await this.#withEntitlements([row]))[0]
  }

  async findCheckIn(id: PolicyId): Promise<CheckInPolicy | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db
      .selectFrom('policies')
      .select(['check_in_interval', 'grace_period'])
      .where('id', '=', id)
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : {
          checkInInterval: row.check_in_interval === null ? null : Number(row.check_in_interval),
          gracePeriod: row.grace_period === null ? null : Number(row.grace_period),
        }
  }

  async update(id: PolicyId, changes: PolicyChanges): Promise<Policy | 'reference_gone' | undefined> {
    const updated = await referencesHeld(() =>
      writeTransaction(this.#db, async (trx) => {
        const row = await trx
          .updateTable('policies')
          .set({
            updated_at: changes.updatedAt.toISOString(),
            ...(changes.name === undefined ? {} : { name: changes.name }),
            ...(changes.maxActivations === undefined ? {} : { max_activations: changes.maxActivations }),
            ...(changes.duration === undefined ? {} : { duration: changes.duration }),
            ...(changes.expirationBasis === undefined ? {} : { expiration_basis: changes.expirationBasis }),
            ...(changes.heartbeatTtl === undefined ? {} : { heartbeat_ttl: changes.heartbeatTtl }),
            ...(changes.maxUses === undefined ? {} : { max_uses: changes.maxUses }),
            ...(changes.metadata === undefined ? {} : { metadata: JSON.stringify(changes.metadata) }),
            ...(changes.licenseFileTtl === undefined ? {} : { license_file_ttl: changes.licenseFileTtl }),
            ...(changes.tokenTtlMax === undefined ? {} : { token_ttl_max: changes.tokenTtlMax }),
            ...(changes.seatsPerQuantity === undefined
              ? {}
              : { seats_per_quantity: changes.seatsPerQuantity ? 1 : 0 }),
            ...(changes.licenseFileMetadata === undefined
              ? {}
              : { license_file_metadata: changes.licenseFileMetadata ? 1 : 0 }),
            ...(changes.maxTransfers === undefined ? {} : { max_transfers: changes.maxTransfers }),
            ...(changes.checkInInterval === undefined ? {} : { check_in_interval: changes.checkInInterval }),
            ...(changes.gracePeriod === undefined ? {} : { grace_period: changes.gracePeriod }),
            ...(changes.transferPeriod === undefined ? {} : { transfer_period: changes.transferPeriod }),
          })
          .where('id', '=', id)
          .returning('id')
          .executeTakeFirst()
        if (row !== undefined && changes.entitlementIds !== undefined) {
          await replaceEntitlements(trx, id, changes.entitlementIds)
        }
        return row !== undefined
      }),
    )
    if (updated === 'reference_gone') {
      return updated
    }
    return updated ? this.findById(id) : undefined
  }

  async delete(id: PolicyId): Promise<'deleted' | 'in_use' | undefined> {
    try {
      return await writeTransaction(this.#db, async (trx) => {
        await trx.deleteFrom('policy_entitlements').where('policy_id', '=', id).execute()
        const deleted = await trx.deleteFrom('policies').where('id', '=', id).executeTakeFirst()
        return deleted.numDeletedRows > 0n ? 'deleted' : undefined
      })
    } catch (error) {
      // licenses.policy_id references it: the database refuses, even for a license made concurrently.
      if (isForeignKeyViolation(error)) {
        return 'in_use'
      }
      throw error
    }
  }

  async list(
    request: ListRequest<PolicySortField, PolicyFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<Policy>> {
    const scope = productId === undefined ? [] : [sql<SqlBool>`policies.product_id = ${productId}`]
    const slice = await selectPage<PolicyRow, PolicySortField, PolicyFilterField>(
      this.#db,
      policyTable,
      request,
      scope,
    )
    return { ...slice, items: await this.#withEntitlements(slice.items) }
  }

  /** Each policy's entitlement codes, sorted, in one query. */
  async #withEntitlements(rows: PolicyRow[]): Promise<Policy[]> {
    if (rows.length === 0) {
      return []
    }
    const links = await this.#db
      .selectFrom('policy_entitlements')
      .innerJoin('entitlements', 'entitlements.id', 'policy_entitlements.entitlement_id')
      .select(['policy_entitlements.policy_id', 'entitlements.code'])
      .where(
        'policy_entitlements.policy_id',
        'in',
        rows.map((row) => row.id),
      )
      .execute()
    const codes = new Map<string, string[]>()
    for (const link of links) {
      codes.set(link.policy_id, [...(codes.get(link.policy_id) ?? []), link.code])
    }
    return rows.map((row) => rowToPolicy(row, (codes.get(row.id) ?? []).sort()))
  }
}
