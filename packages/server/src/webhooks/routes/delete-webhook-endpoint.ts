import { WebhookEndpointParamsSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { WebhookService } from '../webhook-service.js'

export function registerDeleteWebhookEndpoint(api: App, webhooks: WebhookService): void {
  api.delete(
    '/webhook-endpoints/:id',
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint and its delivery log',
        description: 'Its pending deliveries are dropped with it; its events stay in the audit log.',
        tags: ['webhooks'],
        params: WebhookEndpointParamsSchema,
        response: {
          204: Type.Null({ description: 'Deleted.' }),
          ...problemResponses('forbidden', 'webhook_endpoint_not_found'),
        },
      },
    },
    async (request, reply) => {
      await webhooks.delete(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
