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
        tags: ['activations'],
        params: IdParamsSchema(ActivationIdSchema),
        response: {
          204: Type.Null({ description: 'Deactivated' }),
          ...problemResponses('activation_not_found'),
        },
      },
    },
    async (request, reply) => {
      await activations.deactivate(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
