import { CreateWebhookEndpointBodySchema, WebhookEndpointWithSecretResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toWebhookEndpointWithSecretResource } from '../webhook-resource.js'
import type { WebhookService } from '../webhook-service.js'

export function registerCreateWebhookEndpoint(api: App, webhooks: WebhookService): void {
  api.post(
    '/webhook-endpoints',
    {
      // After a crash between commit and response: the secret is shown once and never stored in clear.
      config: { idempotencyRecovery: 'refuse', responseHoldsSecret: true },
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'Matching events are POSTed to `url`, signed per Standard Webhooks with the `secret` returned here (shown only now). `eventTypes`: exact types, `<resource>.*`, or `*`. A product key creates endpoints of its own product only; an endpoint without `productId` (all products, and global events) needs an admin key.',
        tags: ['webhooks'],
        body: CreateWebhookEndpointBodySchema,
        response: {
          201: WebhookEndpointWithSecretResourceSchema,
          ...problemResponses('forbidden', 'product_not_found'),
        },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(request.principal, request.body)
      return reply.code(201).send(toWebhookEndpointWithSecretResource(created))
    },
  )
}
