import { ActivationIdSchema, ActivationResourceSchema, IdParamsSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { ActivationService } from '../activation-service.js'
import { toActivationResource } from './activation-resource.js'

export function registerGetActivation(api: App, activations: ActivationService): void {
  api.get(
    '/activations/:id',
    {
      schema: {
        operationId: 'getActivation',
        summary: 'Retrieve an activation',
        tags: ['activations'],
        params: IdParamsSchema(ActivationIdSchema),
        response: { 200: ActivationResourceSchema, ...problemResponses('activation_not_found') },
      },
    },
    async (request) => toActivationResource(await activations.get(request.principal, request.params.id)),
  )
}
