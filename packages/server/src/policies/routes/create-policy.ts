import { CreatePolicyBodySchema, PolicyResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toPolicyResource } from '../policy-resource.js'
import type { PolicyService } from '../policy-service.js'

export function registerCreatePolicy(api: App, policies: PolicyService): void {
  api.post(
    '/policies',
    {
      schema: {
        operationId: 'createPolicy',
        summary: 'Create a policy (a plan) of a product',
        description:
          'A template for licenses: `POST /licenses` with `policyId` takes `maxActivations` and the expiration from it unless the request gives them. `maxActivations` defaults to 1, `duration` to null (never expires), `expirationBasis` to `creation`.',
        tags: ['policies'],
        body: CreatePolicyBodySchema,
        response: { 201: PolicyResourceSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(toPolicyResource(await policies.create(request.principal, request.body))),
  )
}
