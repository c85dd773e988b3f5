import {
  EntitlementIdSchema,
  EntitlementResourceSchema,
  IdParamsSchema,
  UpdateEntitlementBodySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toEntitlementResource } from '../entitlement-resource.js'
import type { EntitlementService } from '../entitlement-service.js'

export function registerUpdateEntitlement(api: App, entitlements: EntitlementService): void {
  api.patch(
    '/entitlements/:id',
    {
      schema: {
        operationId: 'updateEntitlement',
        summary: 'Rename an entitlement or change its code',
        description:
          'Licenses and policies refer to the entitlement, so a new code shows on them at once (and in tokens issued afterwards).',
        tags: ['entitlements'],
        params: IdParamsSchema(EntitlementIdSchema),
        body: UpdateEntitlementBodySchema,
        response: {
          200: EntitlementResourceSchema,
          ...problemResponses('forbidden', 'entitlement_not_found', 'entitlement_code_taken'),
        },
      },
    },
    async (request) =>
      toEntitlementResource(await entitlements.update(request.principal, request.params.id, request.body)),
  )
}
