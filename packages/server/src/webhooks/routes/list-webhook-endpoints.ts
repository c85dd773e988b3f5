import { ListWebhookEndpointsQuerySchema, WebhookEndpointListSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookEndpointResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerListWebhookEndpoints(api: App, webhooks: WebhookService): void {
  api.get(
    '/webhook-endpoints',
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints, a page at a time',
        description:
          'Admin keys see every endpoint, product keys their product’s. Sort field: `createdAt` (default, desc). Filter fields: `productId`, `createdAt`.',
        tags: ['webhooks'],
        querystring: ListWebhookEndpointsQuerySchema,
        response: { 200: WebhookEndpointListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await webhooks.list(request.principal, request.query)
      return { ...page, data: page.data.map(toWebhookEndpointResource) }
    },
  )
}
