import { CreateCustomerBodySchema, CustomerResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toCustomerResource } from '../customer-resource.js'
import type { CustomerService } from '../customer-service.js'

export function registerCreateCustomer(api: App, customers: CustomerService): void {
  api.post(
    '/customers',
    {
      schema: {
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description:
          'Emails are unique, compared case-insensitively (409 `customer_email_taken`). Admin and product keys may create customers; a product key then sees a customer once it owns a license of its product.',
        tags: ['customers'],
        body: CreateCustomerBodySchema,
        response: { 201: CustomerResourceSchema, ...problemResponses('forbidden', 'customer_email_taken') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(toCustomerResource(await customers.create(request.principal, request.body))),
  )
}
