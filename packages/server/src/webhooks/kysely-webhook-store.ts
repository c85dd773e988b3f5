import type { EventType, ProductId, WebhookDeliveryId, WebhookEndpointId } from '@keyturn/protocol'
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import { newId } from '../core/ids.js'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import type { Event } from '../events/event.js'
import { toEventResource } from '../events/event-resource.js'
import { rowToEvent } from '../events/kysely-event-store.js'
import {
  type Database,
  toDate,
  toNullableDate,
  type WebhookDeliveriesTable,
  type WebhookEndpointsTable,
} from '../storage/database.js'
import { leaseDueRows } from '../storage/leases.js'
import { column, isStorableText, type ListTable, selectPage } from '../storage/list-sql.js'
import { isSqlite, writeTransaction } from '../storage/write-transaction.js'
import { type AttemptResult, maxKeptResponseBytes, type WebhookDelivery } from './webhook-delivery.js'
import { endpointWants, type WebhookEndpoint } from './webhook-endpoint.js'
import type {
  ClaimedDelivery,
  DeliveryFilterField,
  DeliverySortField,
  EndpointChanges,
  EndpointFilterField,
  EndpointSortField,
  WebhookStore,
} from './webhook-store.js'

type EndpointRow = Selectable<WebhookEndpointsTable>
type DeliveryRow = Selectable<WebhookDeliveriesTable>

const endpointTable: ListTable<EndpointSortField, EndpointFilterField> = {
  table: 'webhook_endpoints',
  sort: { createdAt: column('created_at') },
  filters: { productId: { column: 'product_id' }, createdAt: { column: 'created_at' } },
}

const deliveryTable: ListTable<DeliverySortField, DeliveryFilterField> = {
  table: 'webhook_deliveries',
  sort: { createdAt: column('created_at') },
  filters: {
    status: { column: 'status' },
    eventType: { column: 'event_type' },
    createdAt: { column: 'created_at' },
  },
}

function parseJson(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value // text in SQLite, jsonb in PostgreSQL
}

function rowToEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id as WebhookEndpointId, // written only from newId('webhookEndpoint')
    url: row.url,
    description: row.description,
    eventTypes: parseJson(row.event_types) as string[],
    productId: row.product_id,
    disabledAt: toNullableDate(row.disabled_at),
    failingSince: toNullableDate(row.failing_since),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

function rowToDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id as WebhookDeliveryId, // written only from newId('webhookDelivery')
    endpointId: row.endpoint_id as WebhookEndpointId,
    eventId: row.event_id,
    eventType: row.event_type as EventType,
    productId: row.product_id,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: toNullableDate(row.next_attempt_at),
    lastAttemptAt: toNullableDate(row.last_attempt_at),
    lastResponseStatus: row.last_response_status === null ? null : Number(row.last_response_status),
    lastResponseBody: row.last_response_body,
    lastError: row.last_error,
    deliveredAt: toNullableDate(row.delivered_at),
    createdAt: toDate(row.created_at),
  }
}

/** The first 1 KiB of a body (cut on a character boundary). */
function cut(body: string): string {
  const bytes = Buffer.from(body, 'utf8')
  return bytes.length <= maxKeptResponseBytes
    ? body
    : bytes
        .subarray(0, maxKeptResponseBytes)
        .toString('utf8')
        .replace(/\uFFFD$/, '')
}

/** Another outbox fed by the same pass over new events, in the same transaction. */
export type DispatchListener = (trx: Kysely<Database>, events: readonly Event[], now: Date) => Promise<void>

export class KyselyWebhookStore implements WebhookStore {
  readonly #db: Kysely<Database>

  readonly #onDispatch: DispatchListener | undefined

  /** `onDispatch` runs in each dispatch's transaction with the events it dispatches (mail/ queues mail there). */
  constructor(db: Kysely<Database>, onDispatch?: DispatchListener) {
    this.#db = db
    this.#onDispatch = onDispatch
  }

  async insertEndpoint(endpoint: WebhookEndpoint, secretEncrypted: string): Promise<void> {
    await this.#db
      .insertInto('webhook_endpoints')
      .values({
        id: endpoint.id,
        url: endpoint.url,
        description: endpoint.description,
        event_types: JSON.stringify(endpoint.eventTypes),
        product_id: endpoint.productId,
        secret_encrypted: secretEncrypted,
        disabled_at: endpoint.disabledAt?.toISOString() ?? null,
        failing_since: null,
        created_at: endpoint.createdAt.toISOString(),
        updated_at: endpoint.updatedAt.toISOString(),
      })
      .execute()
  }

  async findEndpoint(id: WebhookEndpointId): Promise<WebhookEndpoint | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst()
    return row === undefined ? undefined : rowToEndpoint(row)
  }

  async findEndpointSecret(id: WebhookEndpointId): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('webhook_endpoints')
      .select('secret_encrypted')
      .where('id', '=', id)
      .executeTakeFirst()
    return row?.secret_encrypted
  }

  async updateEndpoint(
    id: WebhookEndpointId,
    changes: EndpointChanges,
  ): Promise<WebhookEndpoint | undefined> {
    const row = await this.#db
      .updateTable('webhook_endpoints')
      .set({
        updated_at: changes.updatedAt.toISOString(),
        ...(changes.url === undefined ? {} : { url: changes.url }),
        ...(changes.description === undefined ? {} : { description: changes.description }),
        ...(changes.eventTypes === undefined ? {} : { event_types: JSON.stringify(changes.eventTypes) }),
        ...(changes.disabledAt === undefined
          ? {}
          : { disabled_at: changes.disabledAt?.toISOString() ?? null }),
        ...(changes.failingSince === undefined
          ? {}
          : { failing_since: changes.failingSince?.toISOString() ?? null }),
        ...(changes.secretEncrypted === undefined ? {} : { secret_encrypted: changes.secretEncrypted }),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? undefined : rowToEndpoint(row)
  }

  async deleteEndpoint(id: WebhookEndpointId): Promise<WebhookEndpoint | undefined> {
    const row = await this.#db
      .deleteFrom('webhook_endpoints')
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? undefined : rowToEndpoint(row)
  }

  async listEndpoints(
    request: ListRequest<EndpointSortField, EndpointFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<WebhookEndpoint>> {
    const scope = productId === undefined ? [] : [sql<SqlBool>`webhook_endpoints.product_id = ${productId}`]
    const slice = await selectPage<EndpointRow, EndpointSortField, EndpointFilterField>(
      this.#db,
      endpointTable,
      request,
      scope,
    )
    return { ...slice, items: slice.items.map(rowToEndpoint) }
  }

  async isAnySubscribedTo(types: readonly EventType[]): Promise<boolean> {
    const rows = await this.#db
      .selectFrom('webhook_endpoints')
      .select('event_types')
      .where('disabled_at', 'is', null)
      .execute()
    return rows.some((row) =>
      (parseJson(row.event_types) as string[]).some((pattern) =>
        types.some(
          (type) =>
            pattern === '*' ||
            pattern === type ||
            (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1))),
        ),
      ),
    )
  }

  async findDelivery(id: WebhookDeliveryId): Promise<WebhookDelivery | undefined> {
    if (!isStorableText(id)) {
      return undefined
    }
    const row = await this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst()
    return row === undefined ? undefined : rowToDelivery(row)
  }

  async listDeliveries(
    endpointId: WebhookEndpointId,
    request: ListRequest<DeliverySortField, DeliveryFilterField>,
  ): Promise<ListSlice<WebhookDelivery>> {
    const slice = await selectPage<DeliveryRow, DeliverySortField, DeliveryFilterField>(
      this.#db,
      deliveryTable,
      request,
      [sql<SqlBool>`webhook_deliveries.endpoint_id = ${endpointId}`],
    )
    return { ...slice, items: slice.items.map(rowToDelivery) }
  }

  async retryDelivery(id: WebhookDeliveryId, now: Date): Promise<WebhookDelivery | undefined> {
    const row = await this.#db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: now.toISOString(), lease_id: null, lease_until: null })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? undefined : rowToDelivery(row)
  }

  async dispatch(now: Date, limit: number): Promise<number> {
    return writeTransaction(this.#db, async (trx) => {
      let query = trx
        .selectFrom('events')
        .selectAll()
        .where('dispatched_at', 'is', null)
        .orderBy('occurred_at')
        .limit(limit)
      if (!isSqlite(trx)) {
        // Another process dispatching at the same time takes other events, never the same ones.
        query = query.forUpdate().skipLocked()
      }
      const events = (await query.execute()).map(rowToEvent)
      if (events.length === 0) {
        return 0
      }
      const endpoints = (
        await trx.selectFrom('webhook_endpoints').selectAll().where('disabled_at', 'is', null).execute()
      ).map(rowToEndpoint)
      const deliveries = events.flatMap((event) =>
        endpoints
          .filter((endpoint) => endpointWants(endpoint, event))
          .map((endpoint) => ({
            id: newId('webhookDelivery'),
            endpoint_id: endpoint.id,
            event_id: event.id,
            event_type: event.type,
            product_id: event.productId,
            status: 'pending' as const,
            next_attempt_at: now.toISOString(),
            created_at: now.toISOString(),
          })),
      )
      for (let i = 0; i < deliveries.length; i += 500) {
        await trx
          .insertInto('webhook_deliveries')
          .values(deliveries.slice(i, i + 500))
          .execute()
      }
      await this.#onDispatch?.(trx, events, now)
      await trx
        .updateTable('events')
        .set({ dispatched_at: now.toISOString() })
        .where(
          'id',
          'in',
          events.map((event) => event.id),
        )
        .execute()
      return events.length
    })
  }

  async claimDue(
    now: Date,
    leaseUntil: Date,
    limit: number,
    sending: readonly WebhookDeliveryId[] = [],
  ): Promise<ClaimedDelivery[]> {
    const { leaseId, rows: claimed } = await leaseDueRows(
      this.#db,
      'webhook_deliveries',
      now,
      leaseUntil,
      limit,
      // Not a delivery of a disabled endpoint, nor one this process is still sending.
      (eb) =>
        eb.and([
          eb.exists(
            eb
              .selectFrom('webhook_endpoints')
              .select('webhook_endpoints.id')
              .whereRef('webhook_endpoints.id', '=', 'webhook_deliveries.endpoint_id')
              .where('webhook_endpoints.disabled_at', 'is', null),
          ),
          ...(sending.length > 0 ? [eb('id', 'not in', sending)] : []),
        ]),
    )
    if (claimed.length === 0) {
      return []
    }
    const events = new Map(
      (
        await this.#db
          .selectFrom('events')
          .selectAll()
          .where(
            'id',
            'in',
            claimed.map((row) => row.event_id),
          )
          .execute()
      ).map((row) => [row.id, JSON.stringify(toEventResource(rowToEvent(row)))]),
    )
    const endpoints = new Map(
      (
        await this.#db
          .selectFrom('webhook_endpoints')
          .select(['id', 'url', 'secret_encrypted'])
          .where(
            'id',
            'in',
            claimed.map((row) => row.endpoint_id),
          )
          .execute()
      ).map((row) => [row.id, row]),
    )
    return claimed.flatMap((row) => {
      const payload = events.get(row.event_id)
      const endpoint = endpoints.get(row.endpoint_id)
      return payload === undefined || endpoint === undefined
        ? [] // deleted meanwhile (retention, endpoint removed): the cascade removes the delivery too
        : [
            {
              id: row.id as WebhookDeliveryId,
              leaseId,
              attempts: Number(row.attempts),
              endpoint: {
                id: endpoint.id as WebhookEndpointId,
                url: endpoint.url,
                secretEncrypted: endpoint.secret_encrypted,
              },
              eventId: row.event_id,
              payload,
            },
          ]
    })
  }

  async recordAttempt(
    delivery: ClaimedDelivery,
    at: Date,
    result: AttemptResult,
    nextAttemptAt: Date | null,
  ): Promise<{ readonly failingSince: Date | null } | undefined> {
    const isDelivered = result.kind === 'answered' && result.status >= 200 && result.status < 300
    return writeTransaction(this.#db, async (trx) => {
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          status: isDelivered ? 'delivered' : nextAttemptAt === null ? 'failed' : 'pending',
          attempts: sql`attempts + 1`,
          last_attempt_at: at.toISOString(),
          last_response_status: result.kind === 'answered' ? result.status : null,
          last_response_body: result.kind === 'answered' ? cut(result.body) : null,
          last_error: isDelivered
            ? null
            : result.kind === 'answered'
              ? `The endpoint answered ${result.status}.`
              : result.error,
          next_attempt_at: isDelivered ? null : (nextAttemptAt?.toISOString() ?? null),
          delivered_at: isDelivered ? at.toISOString() : null,
          lease_id: null,
          lease_until: null,
        })
        .where('id', '=', delivery.id)
        .where('lease_id', '=', delivery.leaseId)
        .executeTakeFirst()
      if (Number(updated.numUpdatedRows) === 0) {
        return undefined // the lease ran out and another process took the delivery over
      }
      // The endpoint row is written only when its failing streak starts or ends: concurrent
      // deliveries to one endpoint do not queue on its row lock (PostgreSQL) for every attempt.
      if (isDelivered) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ failing_since: null })
          .where('id', '=', delivery.endpoint.id)
          .where('failing_since', 'is not', null)
          .execute()
        return { failingSince: null }
      }
      const started = await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: at.toISOString() })
        .where('id', '=', delivery.endpoint.id)
        .where('failing_since', 'is', null)
        .returning('failing_since')
        .executeTakeFirst()
      const endpoint =
        started ??
        (await trx
          .selectFrom('webhook_endpoints')
          .select('failing_since')
          .where('id', '=', delivery.endpoint.id)
          .executeTakeFirst())
      return { failingSince: toNullableDate(endpoint?.failing_since ?? null) }
    })
  }

  async disableEndpoint(id: WebhookEndpointId, at: Date): Promise<WebhookEndpoint | undefined> {
    const row = await this.#db
      .updateTable('webhook_endpoints')
      .set({ disabled_at: at.toISOString(), updated_at: at.toISOString() })
      .where('id', '=', id)
      .where('disabled_at', 'is', null)
      .returningAll()
      .executeTakeFirst()
    return row === undefined ? undefined : rowToEndpoint(row)
  }

  async pendingBacklog(): Promise<{ readonly count: number; readonly oldest: Date | null }> {
    const row = await this.#db
      .selectFrom('webhook_deliveries')
      .select((eb) => [eb.fn.countAll().as('count'), eb.fn.min('created_at').as('oldest')])
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow()
    return {
      count: Number(row.count),
      oldest: row.oldest === null ? null : toDate(row.oldest as Date | string),
    }
  }

  async undispatchedEvents(): Promise<number> {
    // The partial index events_undispatched holds exactly these rows.
    const row = await this.#db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('dispatched_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(row.count)
  }
}
