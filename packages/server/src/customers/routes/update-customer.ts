import {
  CustomerIdSchema,
  CustomerResourceSchema,
  IdParamsSchema,
  UpdateCustomerBodySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toCustomerResource } from '../customer-resource.js'
import type { CustomerService } from '../customer-service.js'

export function registerUpdateCustomer(api: App, customers: CustomerService): void {
  api.patch(
    '/customers/:id',
    {
      schema: {
        operationId: 'updateCustomer',
        summary: 'Change a customer',
        description:
          'Fields given replace the current ones; `metadata` is merged key by key (a key set to `null` is removed). Emails are unique, compared case-insensitively.',
        tags: ['customers'],
        params: IdParamsSchema(CustomerIdSchema),
        body: UpdateCustomerBodySchema,
        response: {
          200: CustomerResourceSchema,
          ...problemResponses('forbidden', 'customer_not_found', 'customer_email_taken'),
        },
      },
    },
    async (request) =>
      toCustomerResource(await customers.update(request.principal, request.params.id, request.body)),
  )
}
