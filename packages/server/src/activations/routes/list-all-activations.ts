import { ActivationListSchema, ListAllActivationsQuerySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toActivationResource } from '../activation-resource.js'
import type { ActivationService } from '../activation-service.js'

export function registerListAllActivations(api: App, activations: ActivationService): void {
  api.get(
    '/activations',
    {
      schema: {
        operationId: 'listAllActivations',
        summary: "List every license's activations, a page at a time",
        description:
          'Sort fields: `createdAt` (default, desc), `lastSeenAt`, `fingerprint`. Filter fields: `createdAt`, `lastSeenAt`, `fingerprint`, `productId`, `licenseId`. `productId` and `licenseId` may also be given as parameters. A product key sees only its product’s; a floating seat whose lease lapsed is not listed.',
        tags: ['activations'],
        querystring: ListAllActivationsQuerySchema,
        response: {
          200: ActivationListSchema,
          ...problemResponses('forbidden', 'invalid_filter'),
        },
      },
    },
    async (request) => {
      const page = await activations.listAll(request.principal, request.query)
      return { ...page, data: page.data.map(toActivationResource) }
    },
  )
}
