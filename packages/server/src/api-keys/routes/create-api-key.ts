import { CreateApiKeyBodySchema, CreatedApiKeyResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toCreatedApiKeyResource } from '../api-key-resource.js'
import type { ApiKeyService } from '../api-key-service.js'

export function registerCreateApiKey(api: App, apiKeys: ApiKeyService): void {
  api.post(
    '/api-keys',
    {
      // After a crash between commit and response: the secret is shown once and never stored.
      config: { idempotencyRecovery: 'refuse', responseHoldsSecret: true },
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description:
          'Admin only. `role: product` needs `productId`. The response carries `secret`, shown this once; only its HMAC digest is stored.',
        tags: ['api-keys'],
        body: CreateApiKeyBodySchema,
        response: { 201: CreatedApiKeyResourceSchema, ...problemResponses('forbidden', 'product_not_found') },
      },
    },
    async (request, reply) =>
      reply.code(201).send(toCreatedApiKeyResource(await apiKeys.create(request.principal, request.body))),
  )
}
