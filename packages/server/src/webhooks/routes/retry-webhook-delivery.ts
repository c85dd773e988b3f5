import { WebhookDeliveryParamsSchema, WebhookDeliveryResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookDeliveryResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerRetryWebhookDelivery(api: App, webhooks: WebhookService): void {
  api.post(
    '/webhook-deliveries/:id/retry',
    {
      // Making a delivery due again records no event: a retry after a crash simply runs again.
      config: { idempotencyRecovery: 'rerun' },
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Send a webhook delivery again now',
        description:
          'Makes the delivery pending and due now, whatever its status; a worker sends it within about a second.',
        tags: ['webhooks'],
        params: WebhookDeliveryParamsSchema,
        response: {
          200: WebhookDeliveryResourceSchema,
          ...problemResponses('forbidden', 'webhook_delivery_not_found'),
        },
      },
    },
    async (request) =>
      toWebhookDeliveryResource(await webhooks.retryDelivery(request.principal, request.params.id)),
  )
}
