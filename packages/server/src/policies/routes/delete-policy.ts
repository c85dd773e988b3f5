import { IdParamsSchema, PolicyIdSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { PolicyService } from '../policy-service.js'

export function registerDeletePolicy(api: App, policies: PolicyService): void {
  api.delete(
    '/policies/:id',
    {
      schema: {
        operationId: 'deletePolicy',
        summary: 'Delete a policy',
        description: 'Refused with 409 `policy_in_use` while licenses made from it exist.',
        tags: ['policies'],
        params: IdParamsSchema(PolicyIdSchema),
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...problemResponses('forbidden', 'policy_not_found', 'policy_in_use'),
        },
      },
    },
    async (request, reply) => {
      await policies.delete(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
