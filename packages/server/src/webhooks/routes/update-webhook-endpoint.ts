import {
  UpdateWebhookEndpointBodySchema,
  WebhookEndpointParamsSchema,
  WebhookEndpointResourceSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookEndpointResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerUpdateWebhookEndpoint(api: App, webhooks: WebhookService): void {
  api.patch(
    '/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint',
        description:
          'Change `url`, `description`, `eventTypes`, or `enabled` (enabling a disabled endpoint sends its pending deliveries).',
        tags: ['webhooks'],
        params: WebhookEndpointParamsSchema,
        body: UpdateWebhookEndpointBodySchema,
        response: {
          200: WebhookEndpointResourceSchema,
          ...problemResponses('forbidden', 'webhook_endpoint_not_found'),
        },
      },
    },
    async (request) =>
      toWebhookEndpointResource(await webhooks.update(request.principal, request.params.id, request.body)),
  )
}
