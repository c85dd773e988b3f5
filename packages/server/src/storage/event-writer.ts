import type { EventType, LicenseId } from '@keyturn/protocol'
import { type Insertable, type Kysely, type RawBuilder, sql } from 'kysely'
import type { Event } from '../core/unit-of-work.js'
import type { Database, EventsTable } from './database.js'
import { insertIfReturned } from './one-statement.js'
import { isSqlite } from './write-transaction.js'

/**
 * The license an event is about, for `GET /events?filter=licenseId:eq:…`: a license event's own id,
 * a validation's license, an activation's license; null for every other event (migration 81 reads
 * stored events the same way).
 */
export function licenseIdOf(type: EventType, data: Readonly<Record<string, unknown>>): string | null {
  if (type === 'license.validated' || type === 'license.validation_failed') {
    const license = data.license
    return typeof license === 'object' && license !== null && 'id' in license ? textOrNull(license.id) : null
  }
  if (type.startsWith('license.')) {
    return textOrNull(data.id)
  }
  return type.startsWith('activation.') ? textOrNull(data.licenseId) : null
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

/** The actor's columns: its type and id, and an API key's role. */
function actorColumns(actor: Event['actor']): Pick<EventsTable, 'actor_type' | 'actor_id' | 'actor_role'> {
  return {
    actor_type: actor.type,
    actor_id: actor.id,
    actor_role: actor.type === 'apiKey' ? actor.role : null,
  }
}

export function eventToRow(event: Event): Insertable<EventsTable> {
  return {
    id: event.id,
    type: event.type,
    occurred_at: event.occurredAt.toISOString(),
    product_id: event.productId,
    ...actorColumns(event.actor),
    request_id: event.requestId,
    data: JSON.stringify(event.data),
    license_id: licenseIdOf(event.type, event.data) as LicenseId | null,
    dispatched_at: null,
  }
}

/**
 * The outbox's fast path (KyselyEventWriter, below): `occurredAt` while no webhook endpoint is
 * enabled, so the event is stored as dispatched at once; null (to be dispatched) otherwise.
 */
function dispatchedUnlessAnEndpointIsEnabled(occurredAt: RawBuilder<unknown>) {
  const anyEnabled = sql`exists (select 1 from webhook_endpoints where disabled_at is null)`
  return sql<string | null>`case when ${anyEnabled} then null else ${occurredAt} end`
}

/**
 * Whether this process queues mail from events (mail configured: KEYTURN_SMTP_URL). While no app of
 * the process has mail, events that may mail take the fast path like any other. It is per process,
 * not per app, and once on stays on: a test process may build apps with and without mail, and an
 * event kept for the dispatch by mistake only costs a dispatch, whereas one skipped by mistake
 * would lose its mail. Processes sharing a database are expected to share the mail settings.
 */
let mailFromEvents = false

/** Called by the composition root of an app with mail configured (app.ts). */
export function queueMailFromEvents(): void {
  mailFromEvents = true
}

/**
 * Whether an event may send a customer mail (mail/kysely-mail-dispatch.ts decides which, in the dispatch
 * step): such an event never takes the fast path below, so the dispatch sees it even while no
 * webhook endpoint is enabled. A license event for a license without a customer cannot send mail.
 */
function mayQueueMail(event: Event): boolean {
  if (!mailFromEvents) {
    return false
  }
  switch (event.type) {
    case 'license.created':
    case 'license.renewed':
    case 'license.expiring_soon':
    case 'license.expired':
      return typeof event.data.customerId === 'string'
    case 'activation.deleted':
      return true
    default:
      return false
  }
}

/**
 * PostgreSQL's insert of `events` from arrays (`unnest`); with `kept`, each is written only if its
 * key is among the rows `kept` selects.
 */
function insertAsArrays(
  events: readonly Event[],
  kept?: { readonly keys: readonly string[]; readonly rows: RawBuilder<unknown> },
) {
  const rows = events.map(eventToRow)
  const values = <T>(read: (row: Insertable<EventsTable>) => T) => rows.map(read)
  return sql`insert into events (id, type, occurred_at, product_id, actor_type, actor_id, actor_role, request_id,
      data, license_id, dispatched_at)
    select e.id, e.type, e.occurred_at, e.product_id, e.actor_type, e.actor_id, e.actor_role, e.request_id, e.data,
      e.license_id, ${dispatchedUnlessAnEndpointIsEnabled(sql.ref('e.occurred_at'))}
    from unnest(
      ${values((row) => row.id)}::text[], ${values((row) => row.type)}::text[],
      ${values((row) => row.occurred_at)}::timestamptz[], ${values((row) => row.product_id)}::text[],
      ${values((row) => row.actor_type)}::text[], ${values((row) => row.actor_id)}::text[],
      ${values((row) => row.actor_role)}::text[],
      ${values((row) => row.request_id)}::text[], ${values((row) => row.data)}::jsonb[],
      ${values((row) => row.license_id)}::text[]${kept === undefined ? sql`` : sql`, ${kept.keys}::text[]`}
    ) as e(id, type, occurred_at, product_id, actor_type, actor_id, actor_role, request_id, data, license_id${
      kept === undefined ? sql`` : sql`, key`
    })${kept === undefined ? sql`` : sql` where e.key in (${kept.rows})`}`
}

/**
 * The writes of the event log (the outbox webhooks are delivered from), for the unit of work and
 * for the adapters whose statements write their events with their change. Reading the log is the
 * events feature's (events/kysely-event-store.ts).
 */
export class KyselyEventWriter {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async insert(events: readonly Event[]): Promise<void> {
    if (events.length > 0) {
      await this.insertQuery(events).execute()
    }
  }

  /** The insert of `events` (at least one), not yet run: for a statement that writes them with its change. */
  insertQuery(events: readonly Event[]) {
    return this.#db.insertInto('events').values(events.map((event) => this.#row(event)))
  }

  /**
   * The inserts of `events`, one each, for a statement (`executeAsOne`) whose write number `index`
   * says whether its change happened: each event is written only if that write returned a row
   * (`insertIfReturned`). `fromReturned` names data fields only the statement knows, each with the
   * column of that returned row it takes its value from (UsageStore.increment: `{ uses: 'uses' }`,
   * the count its update made); the JSON is completed in SQL, so adapters never write JSON SQL.
   */
  insertIfReturnedQueries(
    events: readonly Event[],
    index: number,
    fromReturned: Readonly<Record<string, string>> = {},
  ) {
    const fields = Object.entries(fromReturned)
    return events.map((event) => {
      const row = this.#row(event)
      const data = fields.reduce<RawBuilder<string> | string>(
        (json, [field, column]) =>
          sql<string>`jsonb_set(cast(${json} as jsonb), cast(${`{${field}}`} as text[]), to_jsonb(${sql.ref(`changed.${column}`)}))`,
        row.data,
      )
      return insertIfReturned(this.#db, 'events', { ...row, data }, index)
    })
  }

  #row(event: Event) {
    return {
      ...eventToRow(event),
      dispatched_at: mayQueueMail(event) ? null : this.#dispatchedUnlessAnEndpointIsEnabled(event.occurredAt),
    }
  }

  /**
   * The outbox's fast path (docs/decisions/0023-sqlite-group-commit.md): an event committed while no
   * webhook endpoint is enabled is stored as dispatched at once. No endpoint could ever get it: the
   * dispatch offers an event only to the endpoints enabled when it runs, never one older than the
   * endpoint. So it takes no entry in the undispatched index and no dispatch transaction reading
   * and rewriting it afterwards. The check is part of the insert, in the change's transaction: no
   * extra statement. Measured on SQLite (POST /licenses, 2026-11-23): a create wrote 15.2 WAL pages
   * without its event row and 24.8 with it (the row, its six B-trees, the later dispatch); 23.2
   * with this, and no dispatch commits at all.
   */
  #dispatchedUnlessAnEndpointIsEnabled(occurredAt: Date) {
    const at = occurredAt.toISOString()
    // PostgreSQL types a bare parameter under `case` as text; the column is a timestamptz.
    return dispatchedUnlessAnEndpointIsEnabled(
      isSqlite(this.#db) ? sql`${at}` : sql`cast(${at} as timestamptz)`,
    )
  }

  /**
   * PostgreSQL: the insert of `events`, each written only if its `key` is among the rows `kept`
   * selects (a write's returned ids, in the same statement). The values go as arrays, so the text
   * is the same for any number of events: one prepared statement and plan
   * (activations/kysely-activation-statement-groups.ts).
   */
  insertEachIfKept(
    events: readonly { readonly event: Event; readonly key: string }[],
    kept: RawBuilder<unknown>,
  ) {
    return insertAsArrays(
      events.map(({ event }) => event),
      { keys: events.map(({ key }) => key), rows: kept },
    )
  }

  /**
   * PostgreSQL: the insert of `events` (at least one) with its values as arrays. A multi-row
   * VALUES has a text of its own for each number of rows, each prepared and planned apart and each
   * taking one of a connection's named statements (storage/connect.ts); this one text serves any
   * number (EventGroup).
   */
  insertEach(events: readonly Event[]) {
    return insertAsArrays(events)
  }
}
