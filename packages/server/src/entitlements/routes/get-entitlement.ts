import { EntitlementIdSchema, EntitlementResourceSchema, IdParamsSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toEntitlementResource } from '../entitlement-resource.js'
import type { EntitlementService } from '../entitlement-service.js'

export function registerGetEntitlement(api: App, entitlements: EntitlementService): void {
  api.get(
    '/entitlements/:id',
    {
      schema: {
        operationId: 'getEntitlement',
        summary: 'Retrieve an entitlement',
        description: "A product key sees only its own product's entitlements (404 otherwise).",
        tags: ['entitlements'],
        params: IdParamsSchema(EntitlementIdSchema),
        response: {
          200: EntitlementResourceSchema,
          ...problemResponses('forbidden', 'entitlement_not_found'),
        },
      },
    },
    async (request) => toEntitlementResource(await entitlements.get(request.principal, request.params.id)),
  )
}
