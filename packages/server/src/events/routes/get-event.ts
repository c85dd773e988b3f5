import { EventParamsSchema, EventResourceSchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toEventResource } from '../event-resource.js'
import type { EventService } from '../event-service.js'

export function registerGetEvent(api: App, events: EventService): void {
  api.get(
    '/events/:id',
    {
      schema: {
        operationId: 'getEvent',
        summary: 'Retrieve an event',
        description: 'An event of another product, or a global one for a product key, is not found.',
        tags: ['events'],
        params: EventParamsSchema,
        response: { 200: EventResourceSchema, ...problemResponses('forbidden', 'event_not_found') },
      },
    },
    async (request) => toEventResource(await events.get(request.principal, request.params.id)),
  )
}
