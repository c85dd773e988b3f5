import { IdParamsSchema, PolicyIdSchema, PolicyResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toPolicyResource } from '../policy-resource.js'
import type { PolicyService } from '../policy-service.js'

export function registerGetPolicy(api: App, policies: PolicyService): void {
  api.get(
    '/policies/:id',
    {
      schema: {
        operationId: 'getPolicy',
        summary: 'Retrieve a policy',
        description: "A product key sees only its own product's policies (404 otherwise).",
        tags: ['policies'],
        params: IdParamsSchema(PolicyIdSchema),
        response: { 200: PolicyResourceSchema, ...problemResponses('forbidden', 'policy_not_found') },
      },
    },
    async (request) => toPolicyResource(await policies.get(request.principal, request.params.id)),
  )
}
