import { EntitlementIdSchema, IdParamsSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { EntitlementService } from '../entitlement-service.js'

export function registerDeleteEntitlement(api: App, entitlements: EntitlementService): void {
  api.delete(
    '/entitlements/:id',
    {
      schema: {
        operationId: 'deleteEntitlement',
        summary: 'Delete an entitlement',
        description: 'Detaches the entitlement from every policy and license.',
        tags: ['entitlements'],
        params: IdParamsSchema(EntitlementIdSchema),
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...problemResponses('forbidden', 'entitlement_not_found'),
        },
      },
    },
    async (request, reply) => {
      await entitlements.delete(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
