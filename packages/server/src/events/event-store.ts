import type { EventId, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { Event } from './event.js'

export type EventSortField = 'occurredAt'
export type EventFilterField = 'type' | 'productId' | 'licenseId' | 'occurredAt' | 'actor.type' | 'actor.id'

export const eventListSpec = {
  sortFields: ['occurredAt'],
  defaultSort: { field: 'occurredAt', order: 'desc' } satisfies Sort<EventSortField>,
  filterFields: {
    type: { type: 'string' },
    productId: { type: 'string' },
    licenseId: { type: 'string' },
    occurredAt: { type: 'timestamp' },
    'actor.type': { type: 'string' },
    'actor.id': { type: 'string' },
  } satisfies FieldKinds<EventFilterField>,
} as const

export interface EventStore {
  /** Writes events; called by the unit of work inside the change's transaction. */
  insert(events: readonly Event[]): Promise<void>
  findById(id: EventId): Promise<Event | undefined>
  /** The events one API request committed, oldest first (idempotency recovery). */
  findByRequestId(requestId: string): Promise<Event[]>
  /** `productId`: only that product's events (a product key's scope). */
  list(
    request: ListRequest<EventSortField, EventFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<Event>>
  /**
   * Deletes at most `limit` events that occurred before `cutoff`, oldest first, except those the
   * webhook worker still needs (not yet dispatched, or with a delivery pending); returns how many.
   */
  deleteOlderThan(cutoff: Date, limit: number): Promise<number>
}
