import type { EventResource } from '@keyturn/protocol'
import type { Event } from './event.js'

/** The only converter from the domain's event to the wire shape (also the webhook payload). */
export function toEventResource(event: Event): EventResource {
  return {
    id: event.id,
    object: 'Event',
    type: event.type,
    occurredAt: event.occurredAt.toISOString(),
    productId: event.productId,
    actor: event.actor,
    requestId: event.requestId,
    data: event.data,
  }
}
