import {
  IdParamsSchema,
  PolicyIdSchema,
  PolicyResourceSchema,
  UpdatePolicyBodySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toPolicyResource } from '../policy-resource.js'
import type { PolicyService } from '../policy-service.js'

export function registerUpdatePolicy(api: App, policies: PolicyService): void {
  api.patch(
    '/policies/:id',
    {
      schema: {
        operationId: 'updatePolicy',
        summary: 'Change a policy',
        description:
          'Licenses made from the policy keep their seats and dates; its entitlements are live (licenses show the current set). `metadata` is merged key by key (`null` removes a key).',
        tags: ['policies'],
        params: IdParamsSchema(PolicyIdSchema),
        body: UpdatePolicyBodySchema,
        response: { 200: PolicyResourceSchema, ...problemResponses('forbidden', 'policy_not_found') },
      },
    },
    async (request) =>
      toPolicyResource(await policies.update(request.principal, request.params.id, request.body)),
  )
}
