import { ApiKeyListSchema, ListApiKeysQuerySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toApiKeyResource } from '../api-key-resource.js'
import type { ApiKeyService } from '../api-key-service.js'

export function registerListApiKeys(api: App, apiKeys: ApiKeyService): void {
  api.get(
    '/api-keys',
    {
      schema: {
        operationId: 'listApiKeys',
        summary: 'List API keys, a page at a time',
        description:
          'Admin only. Sort fields: `createdAt` (default, desc), `name`. Filter fields: `role`, `productId`, `createdAt`.',
        tags: ['api-keys'],
        querystring: ListApiKeysQuerySchema,
        response: { 200: ApiKeyListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await apiKeys.list(request.principal, request.query)
      return { ...page, data: page.data.map(toApiKeyResource) }
    },
  )
}
