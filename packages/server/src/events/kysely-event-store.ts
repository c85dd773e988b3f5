import type { EventActor, EventId, EventType, ProductId } from '@keyturn/protocol'
import { type Kysely, type Selectable, sql } from 'kysely'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import { type Database, type EventsTable, toDate } from '../storage/database.js'
import { KyselyEventWriter } from '../storage/event-writer.js'
import { column, isStorableText, type ListTable, selectPage } from '../storage/list-sql.js'
import type { Event } from './event.js'
import type { EventFilterField, EventSortField, EventStore } from './event-store.js'

type EventRow = Selectable<EventsTable>

const eventTable: ListTable<EventSortField, EventFilterField> = {
  table: 'events',
  sort: { occurredAt: column('occurred_at') },
  filters: {
    type: { column: 'type' },
    productId: { column: 'product_id' },
    licenseId: { column: 'license_id' },
    occurredAt: { column: 'occurred_at' },
    'actor.type': { column: 'actor_type' },
    'actor.id': { column: 'actor_id' },
  },
}

export function rowToEvent(row: EventRow): Event {
  return {
    id: row.id as EventId, // written only from newId('event')
    type: row.type as EventType, // written only from the catalogue's types
    occurredAt: toDate(row.occurred_at),
    productId: row.product_id,
    // Written only from an EventActor (storage/event-writer.ts); the role only for an API key.
    actor: (row.actor_type === 'apiKey'
      ? { type: 'apiKey', id: row.actor_id, role: row.actor_role }
      : { type: row.actor_type, id: row.actor_id }) as EventActor,
    requestId: row.request_id,
    // JSON is text in SQLite and parsed jsonb in PostgreSQL.
    data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
  }
}

export class KyselyEventStore implements EventStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  insert(events: readonly Event[]): Promise<void> {
    return new KyselyEventWriter(this.#db).insert(events)
  }

  async findById(id: EventId): Promise<Event | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : rowToEvent(row)
  }

  async findByRequestId(requestId: string): Promise<Event[]> {
    const rows = await this.#db
      .selectFrom('events')
      .selectAll()
      .where('request_id', '=', requestId)
      .orderBy('occurred_at')
      .orderBy('id')
      .execute()
    return rows.map(rowToEvent)
  }

  async list(
    request: ListRequest<EventSortField, EventFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<Event>> {
    const scope = productId === undefined ? [] : [sql<boolean>`events.product_id = ${productId}`]
    const slice = await selectPage<EventRow, EventSortField, EventFilterField>(
      this.#db,
      eventTable,
      request,
      scope,
    )
    return { ...slice, items: slice.items.map(rowToEvent) }
  }

  async deleteOlderThan(cutoff: Date, limit: number): Promise<number> {
    // A bounded batch by primary key, never one long DELETE holding locks on the whole log.
    // An event a delivery still waits for stays until that delivery is delivered or has failed for
    // good: a receiver down across the cutoff still gets it (the deliveries would go with the event).
    const doomed = this.#db
      .selectFrom('events')
      .select('events.id')
      .where('events.occurred_at', '<', cutoff.toISOString())
      .where('events.dispatched_at', 'is not', null)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries')
              .select('webhook_deliveries.id')
              .whereRef('webhook_deliveries.event_id', '=', 'events.id')
              .where('webhook_deliveries.status', '=', 'pending'),
          ),
        ),
      )
      .orderBy('events.occurred_at')
      .limit(limit)
    const result = await this.#db.deleteFrom('events').where('id', 'in', doomed).executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
