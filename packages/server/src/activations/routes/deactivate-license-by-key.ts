import { DeactivateByKeyBodySchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { ActivationService } from '../activation-service.js'

export function registerDeactivateLicenseByKey(api: App, activations: ActivationService): void {
  api.post(
    '/licenses/deactivate',
    {
      config: { applicationFacing: true },
      schema: {
        operationId: 'deactivateLicenseByKey',
        summary: 'Deactivate a machine (by key), freeing its seat',
        description:
          'Answers 404 `activation_not_found` when that fingerprint is not activated for the license.',
        tags: ['activations'],
        body: DeactivateByKeyBodySchema,
        response: {
          204: Type.Null({ description: 'Deactivated' }),
          ...problemResponses('license_not_found', 'activation_not_found'),
        },
      },
    },
    async (request, reply) => {
      await activations.deactivateByKey(request.principal, request.body)
      return reply.code(204).send(null)
    },
  )
}
