import type { EntitlementId, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { Entitlement } from './entitlement.js'

export type EntitlementSortField = 'createdAt' | 'code' | 'name'
export type EntitlementFilterField = 'code' | 'productId' | 'createdAt'

export const entitlementListSpec = {
  sortFields: ['createdAt', 'code', 'name'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<EntitlementSortField>,
  filterFields: {
    code: { type: 'string' },
    productId: { type: 'string' },
    createdAt: { type: 'timestamp' },
  } satisfies FieldKinds<EntitlementFilterField>,
} as const

export type EntitlementChanges = Partial<Pick<Entitlement, 'code' | 'name'>> & { readonly updatedAt: Date }

export type EntitlementWrite =
  | { readonly kind: 'ok'; readonly entitlement: Entitlement }
  | { readonly kind: 'code_taken' }

export interface EntitlementStore {
  insert(entitlement: Entitlement): Promise<EntitlementWrite>
  findById(id: EntitlementId): Promise<Entitlement | undefined>
  /** The product's entitlements with these codes (those that exist). */
  findByCodes(productId: ProductId, codes: readonly string[]): Promise<Entitlement[]>
  update(id: EntitlementId, changes: EntitlementChanges): Promise<EntitlementWrite | undefined>
  /** Deletes it and every link to it (policies, licenses); false if it did not exist. */
  delete(id: EntitlementId): Promise<boolean>
  list(
    request: ListRequest<EntitlementSortField, EntitlementFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<Entitlement>>
}
