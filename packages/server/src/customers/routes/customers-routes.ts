import type { App } from '../../http/app-types.js'
import type { CustomerService } from '../customer-service.js'
import { registerCreateCustomer } from './create-customer.js'
import { registerDeleteCustomer } from './delete-customer.js'
import { registerGetCustomer } from './get-customer.js'
import { registerListCustomers } from './list-customers.js'
import { registerUpdateCustomer } from './update-customer.js'

/** Every route of the customers feature, on the API scope (under /api/v0, behind authentication). */
export function registerCustomersRoutes(api: App, customers: CustomerService): void {
  registerListCustomers(api, customers)
  registerCreateCustomer(api, customers)
  registerGetCustomer(api, customers)
  registerUpdateCustomer(api, customers)
  registerDeleteCustomer(api, customers)
}
