import { EntitlementListSchema, ListEntitlementsQuerySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toEntitlementResource } from '../entitlement-resource.js'
import type { EntitlementService } from '../entitlement-service.js'

export function registerListEntitlements(api: App, entitlements: EntitlementService): void {
  api.get(
    '/entitlements',
    {
      schema: {
        operationId: 'listEntitlements',
        summary: 'List entitlements, a page at a time',
        description:
          'Sort fields: `createdAt` (default, desc), `code`, `name`. Filter fields: `code`, `productId`, `createdAt`. A product key sees only its product.',
        tags: ['entitlements'],
        querystring: ListEntitlementsQuerySchema,
        response: { 200: EntitlementListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await entitlements.list(request.principal, request.query)
      return { ...page, data: page.data.map(toEntitlementResource) }
    },
  )
}
