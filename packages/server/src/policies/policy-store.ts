import type { EntitlementId, PolicyId, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
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
    'name' | 'maxActivations' | 'duration' | 'expirationBasis' | 'heartbeatTtl' | 'maxUses' | 'metadata'
  >
> & {
  readonly updatedAt: Date
  /** Replaces the set of entitlements. */
  readonly entitlementIds?: readonly EntitlementId[]
}

export interface PolicyStore {
  insert(policy: Omit<Policy, 'entitlements'>, entitlementIds: readonly EntitlementId[]): Promise<Policy>
  findById(id: PolicyId): Promise<Policy | undefined>
  update(id: PolicyId, changes: PolicyChanges): Promise<Policy | undefined>
  /** Deletes it unless licenses were made from it; undefined if it did not exist. */
  delete(id: PolicyId): Promise<'deleted' | 'in_use' | undefined>
  list(
    request: ListRequest<PolicySortField, PolicyFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<Policy>>
}
