import { ActivateByKeyBodySchema, ActivationResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toActivationResource } from '../activation-resource.js'
import type { ActivationService } from '../activation-service.js'

export function registerActivateLicenseByKey(api: App, activations: ActivationService): void {
  api.post(
    '/licenses/activate',
    {
      config: { applicationFacing: true, confirmsApiKey: true },
      schema: {
        operationId: 'activateLicenseByKey',
        summary: 'Activate a license on a machine (by key: what an application calls)',
        description:
          'As `activateLicense`, found by `key` and `productId`. An unknown key, or one of another product, answers 404 `license_not_found`.',
        tags: ['activations'],
        body: ActivateByKeyBodySchema,
        response: {
          200: ActivationResourceSchema,
          201: ActivationResourceSchema,
          ...problemResponses('license_not_found', 'license_not_active', 'activation_limit_reached'),
        },
      },
    },
    async (request, reply) => {
      const { outcome, activation } = await activations.activateByKey(request.principal, request.body)
      return reply.code(outcome === 'created' ? 201 : 200).send(toActivationResource(activation))
    },
  )
}
