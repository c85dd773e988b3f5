import type { App } from '../../http/app-types.js'
import type { EventService } from '../event-service.js'
import { registerGetEvent } from './get-event.js'
import { registerListEvents } from './list-events.js'

/** Every route of the events feature, on the API scope (under /api/v0, behind authentication). */
export function registerEventsRoutes(api: App, events: EventService): void {
  registerListEvents(api, events)
  registerGetEvent(api, events)
}
