import {
  ActivateOfflineBodySchema,
  ActivationIdSchema,
  DeactivateOfflineBodySchema,
  deactivationLockSeconds,
  IdParamsSchema,
  maxDeactivationCodeFailures,
  OfflineActivationResourceSchema,
} from '@keyturn/protocol'
import { Type } from 'typebox'
import { toActivationResource } from '../../activations/activation-resource.js'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { OfflineActivationService } from '../offline-activation-service.js'

/** The routes of offline activation, on the API scope (under /api/v0, behind authentication). */
export function registerOfflineRoutes(api: App, offline: OfflineActivationService): void {
  api.post(
    '/licenses/activate-offline',
    {
      // The same request again answers the same activation and file: a rerun is the recovery.
      config: { idempotencyRecovery: 'rerun', responseHoldsSecret: true },
      schema: {
        operationId: 'activateOffline',
        summary: "Activate a machine from its activation request file; answers the machine's license file",
        description:
          'Roles: admin, product (its own products); not client keys (an application that reaches the server activates online). For a machine without a network: its application writes a request file (`@keyturn/client` `createActivationRequest`: product, fingerprint, name, platform, nonce, time, and an HMAC keyed by the license key), the vendor\'s support desk or portal sends it here. The machine takes a seat exactly as an online activation does (same limit, same transaction; `activation.created` with `mode: "offline"`), and the answer carries its license file: always encrypted for the license key and the fingerprint, with the machine\'s deactivation secret inside. The same request again answers the same activation and file. A request altered or made with another key is 400 `activation_request_invalid` or 404 `license_not_found`; a floating license (`heartbeatTtl`) is 409 `license_floating`; a full one 409 `activation_limit_reached`. docs/guides/offline.md describes the request format.',
        tags: ['activations'],
        body: ActivateOfflineBodySchema,
        response: {
          201: OfflineActivationResourceSchema,
          ...problemResponses(
            'forbidden',
            'activation_request_invalid',
            'license_not_found',
            'activation_not_found',
            'license_not_active',
            'license_floating',
            'activation_limit_reached',
          ),
        },
      },
    },
    async (request, reply) => {
      const { activation, file } = await offline.activate(request.principal, request.body)
      return reply.code(201).send({
        activation: toActivationResource(activation),
        licenseFile: file.licenseFile,
        expiresAt: file.expiresAt?.toISOString() ?? null,
      })
    },
  )
  api.post(
    '/activations/:id/deactivate-offline',
    {
      schema: {
        operationId: 'deactivateOffline',
        summary: 'Deactivate a machine by the deactivation code it printed, freeing its seat',
        description: `Roles: admin, product (its own products). The machine's application computes the code from the deactivation secret in its license file (\`@keyturn/client\` \`createDeactivationCode\`) and forgets its license; the user reads the code to the vendor, who sends it here. A right code frees the seat (\`activation.deleted\`, answer 204); a wrong one frees nothing and answers 422 \`deactivation_code_invalid\` with \`triesLeft\`. After ${maxDeactivationCodeFailures} wrong codes in a row the activation's offline deactivation is locked for ${deactivationLockSeconds / 60} minutes (409 \`deactivation_locked\`, \`Retry-After\`).`,
        tags: ['activations'],
        params: IdParamsSchema(ActivationIdSchema),
        body: DeactivateOfflineBodySchema,
        response: {
          204: Type.Null({ description: 'Deactivated' }),
          ...problemResponses(
            'forbidden',
            'activation_not_found',
            'deactivation_code_invalid',
            'deactivation_locked',
          ),
        },
      },
    },
    async (request, reply) => {
      await offline.deactivate(request.principal, request.params.id, request.body)
      return reply.code(204).send(null)
    },
  )
}
