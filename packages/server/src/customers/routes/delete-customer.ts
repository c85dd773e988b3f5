import { CustomerIdSchema, IdParamsSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { CustomerService } from '../customer-service.js'

export function registerDeleteCustomer(api: App, customers: CustomerService): void {
  api.delete(
    '/customers/:id',
    {
      schema: {
        operationId: 'deleteCustomer',
        summary: 'Delete a customer',
        description: 'Refused with 409 `customer_has_licenses` while any license belongs to the customer.',
        tags: ['customers'],
        params: IdParamsSchema(CustomerIdSchema),
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...problemResponses('forbidden', 'customer_not_found', 'customer_has_licenses'),
        },
      },
    },
    async (request, reply) => {
      await customers.delete(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
