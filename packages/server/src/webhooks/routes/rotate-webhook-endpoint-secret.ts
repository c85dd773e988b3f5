import { WebhookEndpointParamsSchema, WebhookEndpointWithSecretResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookEndpointWithSecretResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerRotateWebhookEndpointSecret(api: App, webhooks: WebhookService): void {
  api.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      // After a crash between commit and response: the new secret is shown once.
      config: { idempotencyRecovery: 'refuse', responseHoldsSecret: true },
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Give a webhook endpoint a new signing secret',
        description:
          'The new secret (shown only now) signs every delivery from now on; the old one stops at once.',
        tags: ['webhooks'],
        params: WebhookEndpointParamsSchema,
        response: {
          200: WebhookEndpointWithSecretResourceSchema,
          ...problemResponses('forbidden', 'webhook_endpoint_not_found'),
        },
      },
    },
    async (request) =>
      toWebhookEndpointWithSecretResource(await webhooks.rotateSecret(request.principal, request.params.id)),
  )
}
