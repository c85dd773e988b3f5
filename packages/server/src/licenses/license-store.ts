import type { ApiKeyId, EntitlementId, LicenseId, LicenseStatus, ProductId } from '@keyturn/protocol'
import type { FieldKinds, FilterRule, FilterValue, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { Event } from '../core/unit-of-work.js'
import type { CheckInPolicy } from '../policies/check-in.js'
import type { License } from './license.js'

export type LicenseSortField =
  | 'createdAt'
  | 'updatedAt'
  | 'expirationDate'
  | 'maxActivations'
  | 'key'
  | 'status'
export type LicenseFilterField =
  | 'status'
  | 'productId'
  | 'expirationDate'
  | 'createdAt'
  | 'updatedAt'
  | 'maxActivations'
  | 'customerId'
  | 'policyId'
  | 'metadata'

export const licenseStatuses: readonly LicenseStatus[] = ['active', 'revoked', 'expired']

const isStatus = (value: FilterValue): value is LicenseStatus =>
  licenseStatuses.some((status) => status === value)

/** The statuses a `status` rule lets through (parseFilter has checked its values and operator). */
export function allowedStatuses(rule: FilterRule<LicenseFilterField>): LicenseStatus[] {
  const named = (value: FilterValue): LicenseStatus => {
    if (!isStatus(value)) {
      throw new Error(`"${value}" is not a license status`)
    }
    return value
  }
  switch (rule.operator) {
    case 'in':
      return rule.values.map(named)
    case 'eq':
      return [named(rule.value)]
    case 'ne':
      return licenseStatuses.filter((status) => status !== named(rule.value))
    default:
      return []
  }
}

export const licenseListSpec = {
  sortFields: ['createdAt', 'updatedAt', 'expirationDate', 'maxActivations', 'key', 'status'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<LicenseSortField>,
  filterFields: {
    status: { type: 'enum', values: licenseStatuses },
    productId: { type: 'string' },
    expirationDate: { type: 'timestamp', nullable: true },
    createdAt: { type: 'timestamp' },
    updatedAt: { type: 'timestamp' },
    maxActivations: { type: 'integer', nullable: true },
    customerId: { type: 'string' },
    policyId: { type: 'string' },
    metadata: { type: 'metadata' },
  } satisfies FieldKinds<LicenseFilterField>,
} as const

export interface LicenseListQuery {
  readonly request: ListRequest<LicenseSortField, LicenseFilterField>
  /** Only this product's licenses (a product key's scope, or `?productId=`). */
  readonly productId: ProductId | undefined
  /** Only the licenses with this externalId (`?externalId=`). */
  readonly externalId?: string | undefined
  /** The instant derived statuses are judged at. */
  readonly now: Date
}

export type LicenseChanges = Partial<
  Pick<
    License,
    | 'maxActivations'
    | 'expirationDate'
    | 'revokedAt'
    | 'heartbeatTtl'
    | 'maxUses'
    | 'customerId'
    | 'metadata'
    | 'firstActivationDuration'
    | 'policyId'
    | 'paymentGraceEndsAt'
  >
> & {
  readonly updatedAt: Date
  /** Replaces the license's own entitlements (its policy's stay). */
  readonly entitlementIds?: readonly EntitlementId[]
}

/** Applies an update only while the license still has this expiration state (compare and set). */
export interface LicenseGuard {
  readonly expirationDate: Date | null
  readonly firstActivationDuration: number | null
}

/** A license to insert: `entitlements` are filled in by the store when read back. */
export type NewLicense = Omit<License, 'entitlements'>

/** Which license a read is for: by id, or by its (canonical) key. */
export type LicenseRef = { readonly id: LicenseId } | { readonly key: string }

/** A license and whether its product may be used (it exists and is not suspended). */
export interface LicenseForUse {
  readonly license: License
  readonly productUsable: boolean
  /** Its policy's check-in fields, read live in the same statement; undefined: no check-in. */
  readonly policyCheckIn: CheckInPolicy | undefined
}

/** Storage port for licenses; product scoping is the caller's (the service's) job. */
export interface LicenseStore {
  /**
   * Inserts the license, its own entitlements and `events` (UnitOfWork.writeOne: one statement on
   * PostgreSQL); `reference_gone` when its customer or policy was deleted meanwhile (the foreign
   * keys refuse it, and nothing is written). With `onlyFor`, the same statement also confirms that
   * the product is active and that the caller's API key still exists (a signed-in operator has
   * none: its session was confirmed by authentication); `product_refused` (nothing written) when
   * either is not so; `key_taken` when another license has its key, `external_id_taken` when another
   * license of the product has its externalId (nothing written).
   */
  insert(
    license: NewLicense,
    entitlementIds: readonly EntitlementId[],
    events: readonly Event[],
    onlyFor?: { readonly apiKeyId: ApiKeyId | undefined },
  ): Promise<'ok' | 'reference_gone' | 'product_refused' | 'key_taken' | 'external_id_taken'>
  /** The license, with its entitlement codes read in the same query: by key, validation costs one query. */
  find(which: LicenseRef): Promise<License | undefined>
  /** The product's license with this externalId (an import's source id). */
  findByExternalId(productId: ProductId, externalId: string): Promise<License | undefined>
  /** Of these externalIds, those a license of the product has: each with its license's id and key. */
  findExternalIds(
    productId: ProductId,
    externalIds: readonly string[],
  ): Promise<ReadonlyMap<string, { readonly id: LicenseId; readonly key: string }>>
  /**
   * As `find` by id, locking the license's row until the transaction the store was made on ends
   * (`storage/lock-license.ts`): a read-modify-write of the license takes turns with any other.
   */
  findForUpdate(id: LicenseId): Promise<License | undefined>
  /**
   * The license an API caller asked for, and whether the caller's API key still exists
   * (`api_key_gone` when it was deleted: see the route's `config.confirmsApiKey`). For `'use'`, also
   * whether the license's product may be used (it exists and is not suspended): the online
   * validation's whole read. How the key's existence is confirmed with the read (one statement,
   * shared between concurrent reads on PostgreSQL) is the adapter's business.
   */
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
  /**
   * Applies the changes and returns the license as stored afterwards; undefined if it is gone,
   * `conflict` if a guard was given and no longer holds, `reference_gone` if a customer given was
   * deleted meanwhile. A changed `heartbeatTtl` also renews the leases of the license's alive
   * activations under the new terms (null: they never lapse), in the same transaction.
   */
  update(
    id: LicenseId,
    changes: LicenseChanges,
    guard?: LicenseGuard,
  ): Promise<License | 'conflict' | 'reference_gone' | undefined>
  list(query: LicenseListQuery): Promise<ListSlice<License>>
}
