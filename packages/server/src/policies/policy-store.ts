import type { EntitlementId, PolicyId, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { CheckInPolicy } from './check-in.js'
import type { Policy } from './policy.js'

export type PolicySortField = 'createdAt' | 'updatedAt' | 'name'
export type PolicyFilterField = 'productId' | 'createdAt' | 'updatedAt'

export const policyListSpec = {
  sortFields: ['createdAt', 'updatedAt', 'name'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<PolicySortField>,
  filterFields: {
    productId: { type: 'string' },
    createdAt: { type: 'timestamp' },
    updatedAt: { type: 'timestamp' },
  } satisfies FieldKinds<PolicyFilterField>,
} as const

export type PolicyChanges = Partial<
  Pick<
    Policy,
    | 'name'
    | 'maxActivations'
    | 'duration'
    | 'expirationBasis'
    | 'heartbeatTtl'
    | 'maxUses'
    | 'metadata'
    | 'licenseFileTtl'
    | 'tokenTtlMax'
    | 'licenseFileMetadata'
    | 'maxTransfers'
    | 'checkInInterval'
    | 'gracePeriod'
    | 'transferPeriod'
    | 'seatsPerQuantity'
  >
> & {
  readonly updatedAt: Date
  /** Replaces the set of entitlements. */
  readonly entitlementIds?: readonly EntitlementId[]
}

export interface PolicyStore {
  /** 'reference_gone': an entitlement was deleted meanwhile (the links' foreign key refused it). */
  insert(
    policy: Omit<Policy, 'entitlements'>,
    entitlementIds: readonly EntitlementId[],
  ): Promise<Policy | 'reference_gone'>
  findById(id: PolicyId): Promise<Policy | undefined>
  /** Only the check-in fields: one primary-key read for the validation path. */
  findCheckIn(id: PolicyId): Promise<CheckInPolicy | undefined>
  /** Undefined if it does not exist; 'reference_gone' as for `insert`. */
  update(id: PolicyId, changes: PolicyChanges): Promise<Policy | 'reference_gone' | undefined>
  /** Deletes it unless licenses were made from it; undefined if it did not exist. */
  delete(id: PolicyId): Promise<'deleted' | 'in_use' | undefined>
  list(
    request: ListRequest<PolicySortField, PolicyFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<Policy>>
}
