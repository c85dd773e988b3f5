import {
  ListWebhookDeliveriesQuerySchema,
  WebhookDeliveryListSchema,
  WebhookEndpointParamsSchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookDeliveryResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerListWebhookDeliveries(api: App, webhooks: WebhookService): void {
  api.get(
    '/webhook-endpoints/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List the deliveries of a webhook endpoint, a page at a time',
        description:
          'Sort field: `createdAt` (default, desc). Filter fields: `status` (`pending`, `delivered`, `failed`), `eventType`, `createdAt`.',
        tags: ['webhooks'],
        params: WebhookEndpointParamsSchema,
        querystring: ListWebhookDeliveriesQuerySchema,
        response: {
          200: WebhookDeliveryListSchema,
          ...problemResponses('forbidden', 'invalid_filter', 'webhook_endpoint_not_found'),
        },
      },
    },
    async (request) => {
      const page = await webhooks.listDeliveries(request.principal, request.params.id, request.query)
      return { ...page, data: page.data.map(toWebhookDeliveryResource) }
    },
  )
}
