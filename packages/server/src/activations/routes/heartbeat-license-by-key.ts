import { ActivationResourceSchema, HeartbeatByKeyBodySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toActivationResource } from '../activation-resource.js'
import type { ActivationService } from '../activation-service.js'

export function registerHeartbeatLicenseByKey(api: App, activations: ActivationService): void {
  api.post(
    '/licenses/heartbeat',
    {
      // A heartbeat says "alive now" and records no event: a retry whose first answer was lost
      // beats again (a newer lastHeartbeatAt), which is what the retrying machine means.
      config: { applicationFacing: true, confirmsApiKey: true, idempotencyRecovery: 'rerun' },
      schema: {
        operationId: 'heartbeatLicenseByKey',
        summary: 'Keep a floating seat: heartbeat of a machine (by key: what an application calls)',
        description:
          "Renews the lease of the machine's activation: `lastHeartbeatAt` becomes now and `expiresAt` now plus the license's `heartbeatTtl`; answers the activation. Send one every half `heartbeatTtl` (`@keyturn/client`'s `startHeartbeats` does). When the seat has lapsed, or the machine was never activated, 404 `activation_not_found`: activate again. An unknown key, or one of another product, answers 404 `license_not_found`; a revoked or expired license, or one of a suspended product, 409 `license_not_active`.",
        tags: ['activations'],
        body: HeartbeatByKeyBodySchema,
        response: {
          200: ActivationResourceSchema,
          ...problemResponses('license_not_found', 'activation_not_found', 'license_not_active'),
        },
      },
    },
    async (request) =>
      toActivationResource(await activations.heartbeatByKey(request.principal, request.body)),
  )
}
