import type { CustomerId, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { Customer } from './customer.js'

export type CustomerSortField = 'createdAt' | 'email' | 'name'
export type CustomerFilterField = 'email' | 'createdAt'

export const customerListSpec = {
  sortFields: ['createdAt', 'email', 'name'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<CustomerSortField>,
  filterFields: {
    email: { type: 'string' },
    createdAt: { type: 'timestamp' },
  } satisfies FieldKinds<CustomerFilterField>,
} as const

/** Who may see a customer: everyone (admin), or those owning a license of one product. */
export type CustomerScope = { readonly productId: ProductId } | undefined

export type CustomerChanges = Partial<Pick<Customer, 'email' | 'name' | 'metadata' | 'mailOptOut'>> & {
  readonly updatedAt: Date
}

/** Outcome of a write that may hit the unique email. */
export type CustomerWrite =
  | { readonly kind: 'ok'; readonly customer: Customer }
  | { readonly kind: 'email_taken' }

export interface CustomerStore {
  insert(customer: Customer): Promise<CustomerWrite>
  findById(id: CustomerId, scope: CustomerScope): Promise<Customer | undefined>
  /** The customer with this email, in any case. */
  findByEmail(email: string): Promise<Customer | undefined>
  /** The ids of the customers with these emails, by lower-cased email. */
  findIdsByEmails(emails: readonly string[]): Promise<ReadonlyMap<string, CustomerId>>
  update(id: CustomerId, changes: CustomerChanges): Promise<CustomerWrite | undefined>
  /** Deletes the customer unless it owns licenses; undefined if it does not exist. */
  delete(id: CustomerId): Promise<'deleted' | 'has_licenses' | undefined>
  list(
    request: ListRequest<CustomerSortField, CustomerFilterField>,
    scope: CustomerScope,
  ): Promise<ListSlice<Customer>>
}
