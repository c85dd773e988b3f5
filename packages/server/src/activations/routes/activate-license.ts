import {
  ActivateLicenseBodySchema,
  ActivationResourceSchema,
  IdParamsSchema,
  LicenseIdSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toActivationResource } from '../activation-resource.js'
import type { ActivationService } from '../activation-service.js'

export function registerActivateLicense(api: App, activations: ActivationService): void {
  api.post(
    '/licenses/:id/activations',
    {
      config: { confirmsApiKey: true },
      schema: {
        operationId: 'activateLicense',
        summary: 'Activate a license on a machine (by license id)',
        description:
          'Takes a seat: 201 with the new activation. Repeating it for an activated fingerprint is idempotent: 200 with the activation and a fresh `lastSeenAt`. A new fingerprint beyond `maxActivations` answers 409 `activation_limit_reached` (with `maxActivations` and `activationCount`); a revoked or expired license, or one of a suspended product, 409 `license_not_active`.',
        tags: ['activations'],
        params: IdParamsSchema(LicenseIdSchema),
        body: ActivateLicenseBodySchema,
        response: {
          200: ActivationResourceSchema,
          201: ActivationResourceSchema,
          ...problemResponses(
            'forbidden',
            'license_not_found',
            'license_not_active',
            'activation_limit_reached',
          ),
        },
      },
    },
    async (request, reply) => {
      const { outcome, activation } = await activations.activate(
        request.principal,
        request.params.id,
        request.body,
      )
      return reply.code(outcome === 'created' ? 201 : 200).send(toActivationResource(activation))
    },
  )
}
