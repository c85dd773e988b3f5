import {
  ActivationListSchema,
  IdParamsSchema,
  LicenseIdSchema,
  ListActivationsQuerySchema,
} from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toActivationResource } from '../activation-resource.js'
import type { ActivationService } from '../activation-service.js'

export function registerListActivations(api: App, activations: ActivationService): void {
  api.get(
    '/licenses/:id/activations',
    {
      schema: {
        operationId: 'listActivations',
        summary: "List a license's activations, a page at a time",
        description:
          'Sort fields: `createdAt` (default, desc), `lastSeenAt`, `fingerprint`. Filter fields: `createdAt`, `lastSeenAt`, `fingerprint`.',
        tags: ['activations'],
        params: IdParamsSchema(LicenseIdSchema),
        querystring: ListActivationsQuerySchema,
        response: {
          200: ActivationListSchema,
          ...problemResponses('forbidden', 'license_not_found', 'invalid_filter'),
        },
      },
    },
    async (request) => {
      const page = await activations.list(request.principal, request.params.id, request.query)
      return { ...page, data: page.data.map(toActivationResource) }
    },
  )
}
