import { ActivationIdSchema, ActivationResourceSchema, IdParamsSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toActivationResource } from '../activation-resource.js'
import type { ActivationService } from '../activation-service.js'

export function registerGetActivation(api: App, activations: ActivationService): void {
  api.get(
    '/activations/:id',
    {
      schema: {
        operationId: 'getActivation',
        summary: 'Retrieve an activation',
        description:
          "An activation of a license the API key can see; another product's is `404 activation_not_found`.",
        tags: ['activations'],
        params: IdParamsSchema(ActivationIdSchema),
        response: { 200: ActivationResourceSchema, ...problemResponses('forbidden', 'activation_not_found') },
      },
    },
    async (request) => toActivationResource(await activations.get(request.principal, request.params.id)),
  )
}
