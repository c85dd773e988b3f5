import type { LicenseId, LicenseStatus, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
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

export const licenseStatuses: readonly LicenseStatus[] = ['active', 'revoked', 'expired']

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
  } satisfies FieldKinds<LicenseFilterField>,
} as const

export interface LicenseListQuery {
  readonly request: ListRequest<LicenseSortField, LicenseFilterField>
  /** Only this product's licenses (a product key's scope, or `?productId=`). */
  readonly productId: ProductId | undefined
  /** The instant derived statuses are judged at. */
  readonly now: Date
}

export type LicenseChanges = Partial<
  Pick<License, 'maxActivations' | 'expirationDate' | 'revokedAt' | 'heartbeatTtl' | 'maxUses'>
> & {
  readonly updatedAt: Date
}

/** Storage port for licenses; product scoping is the caller's (the service's) job. */
export interface LicenseStore {
  insert(license: License): Promise<void>
  findById(id: LicenseId): Promise<License | undefined>
  findByKey(key: string): Promise<License | undefined>
  /**
   * Applies the changes and returns the license as stored afterwards, or undefined if it is gone.
   * A changed `heartbeatTtl` also renews the leases of the license's alive activations under the new
   * terms (null: they never lapse), in the same transaction; lapsed ones stay lapsed.
   */
  update(id: LicenseId, changes: LicenseChanges): Promise<License | undefined>
  list(query: LicenseListQuery): Promise<ListSlice<License>>
}
