import { ListPoliciesQuerySchema, PolicyListSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toPolicyResource } from '../policy-resource.js'
import type { PolicyService } from '../policy-service.js'

export function registerListPolicies(api: App, policies: PolicyService): void {
  api.get(
    '/policies',
    {
      schema: {
        operationId: 'listPolicies',
        summary: 'List policies, a page at a time',
        description:
          'Sort fields: `createdAt` (default, desc), `updatedAt`, `name`. Filter fields: `productId`, `createdAt`, `updatedAt`. A product key sees only its product.',
        tags: ['policies'],
        querystring: ListPoliciesQuerySchema,
        response: { 200: PolicyListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await policies.list(request.principal, request.query)
      return { ...page, data: page.data.map(toPolicyResource) }
    },
  )
}
