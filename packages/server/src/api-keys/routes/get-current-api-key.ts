import { ApiKeyResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toApiKeyResource } from '../api-key-resource.js'
import type { ApiKeyService } from '../api-key-service.js'

export function registerGetCurrentApiKey(api: App, apiKeys: ApiKeyService): void {
  api.get(
    '/api-keys/current',
    {
      schema: {
        operationId: 'getCurrentApiKey',
        summary: 'Retrieve the API key making this request (never its secret)',
        description:
          'Admin and product keys (a client key is refused): the role, product and id of the key in ' +
          'the Authorization header, e.g. for a user interface to offer only what the key may do.',
        tags: ['api-keys'],
        response: { 200: ApiKeyResourceSchema, ...problemResponses('forbidden') },
      },
    },
    async (request) => toApiKeyResource(await apiKeys.current(request.principal)),
  )
}
