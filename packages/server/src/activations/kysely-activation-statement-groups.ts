import type { LicenseId } from '@keyturn/protocol'
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { Event } from '../core/unit-of-work.js'
import type { ActivationsTable, Database } from '../storage/database.js'
import { KyselyEventWriter } from '../storage/event-writer.js'
import { StatementGroup } from '../storage/statement-group.js'
import { leaseEnd } from './activation.js'
import type { NewActivation } from './activation-store.js'

/** A machine's seat to renew: its lease from `at` to `expiresAt`, its name and metadata if given. */
export interface Renewal {
  readonly licenseId: LicenseId
  readonly fingerprint: string
  readonly at: string
  readonly expiresAt: string | null
  /** Null: keep the stored one. */
  readonly name: string | null
  /** JSON text; null: keep the stored one. */
  readonly metadata: string | null
}

/** At most this many requests share one statement. */
const maxGrouped = 64
/** PostgreSQL only: the next statement goes out while this one's requests are answered (StatementGroup). */
const overlapped = { overlap: true }

/** The license row has a seat that no activation counts (lapsed ones count until removed). */
export const hasFreeSeat = sql<SqlBool>`(max_activations is null or activation_count < max_activations)`

/** A new machine's activation and its events (`activation.created`), if a seat is free. */
export interface SeatTaking {
  readonly activation: NewActivation
  readonly events: readonly Event[]
}

/**
 * Fast path (docs/decisions/0027-postgresql-shared-statements.md): on PostgreSQL, activations that arrive together share their statements
 * (storage/statement-group.ts), as license reads and creates do
 * (licenses/kysely-license-statement-groups.ts). The statements' texts do not change with their
 * number (the values go as arrays), so PostgreSQL plans each once.
 * - Renewals: every activation by key of a machine that holds a seat, and the first try of one that
 *   does not. Two renewals of one machine in a group share its row.
 * - New machines (ActivationStore.activateAlone): the seats taken, the activations and their events
 *   in one statement, as for one machine. At most one machine per license in a statement: an UPDATE
 *   changes a row once, so a second one for the same license is answered `false` and takes the
 *   transaction's way. A machine that already has an activation fails the statement; each of its
 *   requests then runs alone, and hears its own answer.
 */
export class ActivationStatementGroups {
  readonly #db: Kysely<Database>
  readonly #renewals: StatementGroup<Renewal, Selectable<ActivationsTable> | undefined>
  readonly #seats: StatementGroup<SeatTaking, boolean>

  constructor(db: Kysely<Database>) {
    this.#db = db
    this.#renewals = new StatementGroup((renewals) => this.#renewAll(renewals), maxGrouped, overlapped)
    this.#seats = new StatementGroup((takings) => this.#takeAll(takings), maxGrouped, overlapped)
  }

  /** Whether the machine took a free seat, its activation and events written (it committed). */
  takeSeat(taking: SeatTaking): Promise<boolean> {
    return this.#seats.run(taking)
  }

  /** The machine's activation, renewed, or undefined when it holds no seat. */
  renew(renewal: Renewal): Promise<Selectable<ActivationsTable> | undefined> {
    return this.#renewals.run(renewal)
  }

  async #renewAll(renewals: readonly Renewal[]): Promise<(Selectable<ActivationsTable> | undefined)[]> {
    // One row per machine: an UPDATE changes a row once, however many of its rows join it.
    const machines = new Map<string, number>()
    const distinct: Renewal[] = []
    const machineOf = renewals.map((renewal) => {
      const machine = `${renewal.licenseId} ${renewal.fingerprint}`
      let index = machines.get(machine)
      if (index === undefined) {
        index = distinct.push(renewal) - 1
        machines.set(machine, index)
      }
      return index
    })
    const column = <T>(read: (renewal: Renewal) => T) => distinct.map(read)
    const { rows } = await sql<Selectable<ActivationsTable> & { n: string }>`
      update activations set
        last_seen_at = asked.at, last_heartbeat_at = asked.at, expires_at = asked.expires_at,
        name = coalesce(asked.name, activations.name), metadata = coalesce(asked.metadata, activations.metadata)
      from unnest(
        ${column((r) => r.licenseId)}::text[], ${column((r) => r.fingerprint)}::text[],
        ${column((r) => r.at)}::timestamptz[], ${column((r) => r.expiresAt)}::timestamptz[],
        ${column((r) => r.name)}::text[], ${column((r) => r.metadata)}::jsonb[]
      ) with ordinality as asked(license_id, fingerprint, at, expires_at, name, metadata, n)
      where activations.license_id = asked.license_id and activations.fingerprint = asked.fingerprint
        and (activations.expires_at is null or activations.expires_at > asked.at)
      returning asked.n, activations.*`.execute(this.#db)
    const renewed: (Selectable<ActivationsTable> | undefined)[] = distinct.map(() => undefined)
    for (const { n, ...row } of rows) {
      renewed[Number(n) - 1] = row
    }
    return machineOf.map((index) => renewed[index])
  }

  async #takeAll(takings: readonly SeatTaking[]): Promise<boolean[]> {
    // The first machine of each license; the others are answered false (an UPDATE changes a row once).
    const licenses = new Set<LicenseId>()
    const firsts: SeatTaking[] = []
    for (const taking of takings) {
      if (!licenses.has(taking.activation.licenseId)) {
        licenses.add(taking.activation.licenseId)
        firsts.push(taking)
      }
    }
    const taken = firsts.map((taking) => taking.activation)
    const column = <T>(read: (activation: NewActivation) => T) => taken.map(read)
    const events = firsts.flatMap((taking) =>
      taking.events.map((event) => ({ event, key: taking.activation.id })),
    )
    const { rows } = await sql<{ id: string }>`
      with asked as (
        select * from unnest(
          ${column((a) => a.licenseId)}::text[], ${column((a) => a.id)}::text[],
          ${column((a) => a.productId)}::text[], ${column((a) => a.fingerprint)}::text[],
          ${column((a) => a.name)}::text[],
          ${column((a) => (a.metadata === null ? null : JSON.stringify(a.metadata)))}::jsonb[],
          ${column((a) => a.at.toISOString())}::timestamptz[],
          ${column((a) => leaseEnd(a.at, a.heartbeatTtl)?.toISOString() ?? null)}::timestamptz[]
        ) with ordinality as asked(license_id, id, product_id, fingerprint, name, metadata, at, expires_at, n)
      ),
      taken as (
        update licenses set activation_count = activation_count + 1 from asked
        where licenses.id = asked.license_id and ${hasFreeSeat}
        returning asked.n
      ),
      inserted as (
        insert into activations (id, license_id, product_id, fingerprint, name, metadata, created_at,
          last_seen_at, last_heartbeat_at, expires_at)
        select asked.id, asked.license_id, asked.product_id, asked.fingerprint, asked.name, asked.metadata,
          asked.at, asked.at, asked.at, asked.expires_at
        from asked join taken on taken.n = asked.n
        returning id
      ),
      logged as (${new KyselyEventWriter(this.#db).insertEachIfKept(events, sql`select id from inserted`)})
      select id from inserted`.execute(this.#db)
    const done = new Set(rows.map((row) => row.id))
    return takings.map((taking) => done.has(taking.activation.id))
  }
}
