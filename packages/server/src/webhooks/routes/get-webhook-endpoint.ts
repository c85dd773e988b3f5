import { WebhookEndpointParamsSchema, WebhookEndpointResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookEndpointResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerGetWebhookEndpoint(api: App, webhooks: WebhookService): void {
  api.get(
    '/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Retrieve a webhook endpoint',
        description:
          'An endpoint of another product, or one for every product when asked with a product key, is not found. The secret is never shown again.',
        tags: ['webhooks'],
        params: WebhookEndpointParamsSchema,
        response: {
          200: WebhookEndpointResourceSchema,
          ...problemResponses('forbidden', 'webhook_endpoint_not_found'),
        },
      },
    },
    async (request) => toWebhookEndpointResource(await webhooks.get(request.principal, request.params.id)),
  )
}
