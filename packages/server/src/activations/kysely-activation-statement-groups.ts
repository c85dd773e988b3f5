import type { LicenseId } from '@keyturn/protocol'
import { type Kysely, type Selectable, sql } from 'kysely'
import type { ActivationsTable, Database } from '../storage/database.js'
import { StatementGroup } from '../storage/statement-group.js'

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

/**
 * Fast path (issue 14): on PostgreSQL, the renewals of activations that arrive together share one
 * statement (storage/statement-group.ts), as license reads and creates do
 * (licenses/kysely-license-statement-groups.ts): every activation by key of a machine that holds a
 * seat, and the first try of one that does not. The statement's text does not change with their
 * number (the values go as arrays). Two renewals of one machine in a group share its row.
 */
export class ActivationStatementGroups {
  readonly #db: Kysely<Database>
  readonly #renewals: StatementGroup<Renewal, Selectable<ActivationsTable> | undefined>

  constructor(db: Kysely<Database>) {
    this.#db = db
    this.#renewals = new StatementGroup((renewals) => this.#renewAll(renewals), maxGrouped)
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
}
