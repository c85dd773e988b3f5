import type { EventId, ListEventsQuery, Paginated } from '@keyturn/protocol'
import { DomainError } from '../core/errors.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { canSeeProduct, type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type { Event } from './event.js'
import { type EventStore, eventListSpec } from './event-store.js'

/** Reading the audit log: admin keys see every event, product keys their product's, client keys none. */
export class EventService {
  readonly #events: EventStore

  constructor(deps: { readonly events: EventStore }) {
    this.#events = deps.events
  }

  async list(principal: Principal, query: ListEventsQuery): Promise<Paginated<Event>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, eventListSpec)
    const slice = await this.#events.list(request, scopedProductId(principal))
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  async get(principal: Principal, id: EventId): Promise<Event> {
    requireManagementKey(principal)
    const event = await this.#events.findById(id)
    if (
      event === undefined ||
      (event.productId === null ? principal.role !== 'admin' : !canSeeProduct(principal, event.productId))
    ) {
      throw new DomainError('event_not_found', `No event ${id} is visible to this API key.`)
    }
    return event
  }
}
