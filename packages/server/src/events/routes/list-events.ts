import { EventListSchema, ListEventsQuerySchema } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import { toEventResource } from '../event-resource.js'
import type { EventService } from '../event-service.js'

export function registerListEvents(api: App, events: EventService): void {
  api.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'List events (the audit log), a page at a time',
        description:
          'Admin keys see every event; product keys only their product’s. Sort field: `occurredAt` (default, desc). Filter fields: `type` (with `in` for several), `productId`, `licenseId` (the events about a license: its own, its validations’ and its activations’), `occurredAt`, `actor.type` (`apiKey`, `operator`, `customer`, `integration`, `system`) and `actor.id` (who: an API key’s, operator’s, customer’s or integration’s id, or the server’s part).',
        tags: ['events'],
        querystring: ListEventsQuerySchema,
        response: { 200: EventListSchema, ...problemResponses('forbidden', 'invalid_filter') },
      },
    },
    async (request) => {
      const page = await events.list(request.principal, request.query)
      return { ...page, data: page.data.map(toEventResource) }
    },
  )
}
