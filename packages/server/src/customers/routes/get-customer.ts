import { CustomerIdSchema, CustomerResourceSchema, IdParamsSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toCustomerResource } from '../customer-resource.js'
import type { CustomerService } from '../customer-service.js'

export function registerGetCustomer(api: App, customers: CustomerService): void {
  api.get(
    '/customers/:id',
    {
      schema: {
        operationId: 'getCustomer',
        summary: 'Retrieve a customer',
        description:
          'A product key sees a customer only while it owns a license of its product (404 otherwise).',
        tags: ['customers'],
        params: IdParamsSchema(CustomerIdSchema),
        response: { 200: CustomerResourceSchema, ...problemResponses('forbidden', 'customer_not_found') },
      },
    },
    async (request) => toCustomerResource(await customers.get(request.principal, request.params.id)),
  )
}
