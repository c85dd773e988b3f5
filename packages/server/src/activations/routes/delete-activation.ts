import { ActivationIdSchema, IdParamsSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { ActivationService } from '../activation-service.js'

export function registerDeleteActivation(api: App, activations: ActivationService): void {
  api.delete(
    '/activations/:id',
    {
      schema: {
        operationId: 'deleteActivation',
        summary: 'Deactivate a machine (by activation id), freeing its seat',
        description:
          'Frees the seat at once; deleting it again is `404 activation_not_found`. Applications that know only their license key use `POST /licenses/deactivate`.',
        tags: ['activations'],
        params: IdParamsSchema(ActivationIdSchema),
        response: {
          204: Type.Null({ description: 'Deactivated' }),
          ...problemResponses('forbidden', 'activation_not_found'),
        },
      },
    },
    async (request, reply) => {
      await activations.deactivate(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
