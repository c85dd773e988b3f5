import { ActivationIdSchema, ActivationResourceSchema, IdParamsSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toActivationResource } from '../activation-resource.js'
import type { ActivationService } from '../activation-service.js'

export function registerHeartbeatActivation(api: App, activations: ActivationService): void {
  api.post(
    '/activations/:id/heartbeat',
    {
      // A heartbeat says "alive now" and records no event: a retry whose first answer was lost
      // beats again (a newer lastHeartbeatAt), which is what the retrying machine means.
      config: { idempotencyRecovery: 'rerun' },
      schema: {
        operationId: 'heartbeatActivation',
        summary: 'Renew the lease of a floating seat (by activation id)',
        description:
          "Sets `lastHeartbeatAt` to now and `expiresAt` to now plus the license's `heartbeatTtl` (null when it has none), and answers the activation. A lapsed or unknown activation answers 404 `activation_not_found` (activate again); a revoked or expired license, or one of a suspended product, 409 `license_not_active`. Applications use `heartbeatLicenseByKey`.",
        tags: ['activations'],
        params: IdParamsSchema(ActivationIdSchema),
        response: {
          200: ActivationResourceSchema,
          ...problemResponses('activation_not_found', 'license_not_active'),
        },
      },
    },
    async (request) =>
      toActivationResource(await activations.heartbeat(request.principal, request.params.id)),
  )
}
