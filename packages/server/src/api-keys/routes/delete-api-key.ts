import { ApiKeyIdSchema, IdParamsSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { ApiKeyService } from '../api-key-service.js'

export function registerDeleteApiKey(api: App, apiKeys: ApiKeyService): void {
  api.delete(
    '/api-keys/:id',
    {
      schema: {
        operationId: 'deleteApiKey',
        summary: 'Delete an API key',
        description: 'Admin only. The key is refused from the next request on, by every server process.',
        tags: ['api-keys'],
        params: IdParamsSchema(ApiKeyIdSchema),
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...problemResponses('forbidden', 'api_key_not_found'),
        },
      },
    },
    async (request, reply) => {
      await apiKeys.delete(request.principal, request.params.id)
      return reply.code(204).send(null)
    },
  )
}
