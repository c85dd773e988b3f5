import { WebhookEndpointParamsSchema, WebhookEndpointResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookEndpointResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerTestWebhookEndpoint(api: App, webhooks: WebhookService): void {
  api.post(
    '/webhook-endpoints/:id/test',
    {
      // Another test event is harmless: a retry after a crash sends one again.
      config: { idempotencyRecovery: 'rerun' },
      schema: {
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test event to a webhook endpoint',
        description:
          'Records a `webhook_endpoint.test` event (its data: this endpoint), delivered to this endpoint only, like any other: see its deliveries.',
        tags: ['webhooks'],
        params: WebhookEndpointParamsSchema,
        response: {
          202: WebhookEndpointResourceSchema,
          ...problemResponses('forbidden', 'webhook_endpoint_not_found'),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(toWebhookEndpointResource(await webhooks.sendTest(request.principal, request.params.id))),
  )
}
