import { CustomerListSchema, ListCustomersQuerySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toCustomerResource } from '../customer-resource.js'
import type { CustomerService } from '../customer-service.js'

export function registerListCustomers(api: App, customers: CustomerService): void {
  api.get(
    '/customers',
    {
      schema: {
        operationId: 'listCustomers',
        summary: 'List customers, a page at a time',
        description:
          'Sort fields: `createdAt` (default, desc), `email`, `name`. Filter fields: `email` (compared case-insensitively), `createdAt`. Example: `filter=email:eq:ada@example.com`. A product key sees only customers owning a license of its product.',
        tags: ['customers'],
        querystring: ListCustomersQuerySchema,
        response: { 200: CustomerListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await customers.list(request.principal, request.query)
      return { ...page, data: page.data.map(toCustomerResource) }
    },
  )
}
