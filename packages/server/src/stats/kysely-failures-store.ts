import type {
  EventId,
  EventType,
  FailingDelivery,
  WebhookDeliveryId,
  WebhookEndpointId,
} from '@keyturn/protocol'
import type { Kysely } from 'kysely'
import { type Database, toDate, toNullableDate } from '../storage/database.js'
import type { DeliveryScope, FailuresStore } from './failures-store.js'

/** Failing deliveries through the partial index `webhook_deliveries_failing` (migration 2026-12-01-81). */
export class KyselyFailuresStore implements FailuresStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async failingDeliveries(limit: number, scope: DeliveryScope): Promise<FailingDelivery[]> {
    let query = this.#db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select([
        'd.id',
        'd.endpoint_id',
        'e.url',
        'd.event_id',
        'd.event_type',
        'd.status',
        'd.attempts',
        'd.last_response_status',
        'd.last_error',
        'd.last_attempt_at',
        'd.next_attempt_at',
      ])
      // The index's predicate, word for word.
      .where('d.status', '<>', 'delivered')
      .where('d.last_attempt_at', 'is not', null)
      .orderBy('d.last_attempt_at', 'desc')
      .orderBy('d.id', 'desc')
      .limit(limit)
    if (scope !== undefined) {
      query = query.where('d.product_id', '=', scope.productId)
      if (scope.ownEndpointsOnly) {
        query = query.where('e.product_id', '=', scope.productId)
      }
    }
    const rows = await query.execute()
    return rows.map((row) => ({
      deliveryId: row.id as WebhookDeliveryId,
      endpointId: row.endpoint_id as WebhookEndpointId,
      endpointUrl: row.url,
      eventId: row.event_id as EventId,
      eventType: row.event_type as EventType,
      status: row.status === 'failed' ? 'failed' : 'pending',
      attempts: Math.max(1, Number(row.attempts)),
      lastResponseStatus: row.last_response_status,
      lastError: row.last_error === null ? null : row.last_error.slice(0, 1024),
      lastAttemptAt: toDate(row.last_attempt_at as Date | string).toISOString(),
      nextAttemptAt: toNullableDate(row.next_attempt_at)?.toISOString() ?? null,
    }))
  }
}
