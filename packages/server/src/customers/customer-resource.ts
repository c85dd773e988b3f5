import type { CustomerResource } from '@keyturn/protocol'
import type { Customer } from './customer.js'

/** The only converter from the domain's customer to the wire shape. */
export function toCustomerResource(customer: Customer): CustomerResource {
  return {
    id: customer.id,
    object: 'Customer',
    email: customer.email,
    name: customer.name,
    metadata: customer.metadata,
    mailOptOut: customer.mailOptOut,
    createdAt: customer.createdAt.toISOString(),
    updatedAt: customer.updatedAt.toISOString(),
  }
}
