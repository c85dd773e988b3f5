import { ApiKeyIdSchema, ApiKeyResourceSchema, IdParamsSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toApiKeyResource } from '../api-key-resource.js'
import type { ApiKeyService } from '../api-key-service.js'

export function registerGetApiKey(api: App, apiKeys: ApiKeyService): void {
  api.get(
    '/api-keys/:id',
    {
      schema: {
        operationId: 'getApiKey',
        summary: 'Retrieve an API key (never its secret)',
        description: 'Admin only.',
        tags: ['api-keys'],
        params: IdParamsSchema(ApiKeyIdSchema),
        response: { 200: ApiKeyResourceSchema, ...problemResponses('forbidden', 'api_key_not_found') },
      },
    },
    async (request) => toApiKeyResource(await apiKeys.get(request.principal, request.params.id)),
  )
}
