import type { ApiKeyId } from '@keyturn/protocol'
import { type Insertable, type InsertObject, type Kysely, sql } from 'kysely'
import type { Event } from '../core/unit-of-work.js'
import type { Database, LicenseEntitlementsTable } from '../storage/database.js'
import { KyselyEventWriter } from '../storage/event-writer.js'
import { executeAsOne } from '../storage/one-statement.js'
import { StatementGroup } from '../storage/statement-group.js'
import { entitlementCodes, type LicenseRow, policyCheckIn, productUsable } from './kysely-license-rows.js'

/** What one license create writes: its row, its links to its own entitlements, and its events. */
export interface LicenseInsert {
  readonly row: InsertObject<Database, 'licenses'>
  readonly links: readonly Insertable<LicenseEntitlementsTable>[]
  readonly events: readonly Event[]
}

/** The writes of `inserts`, in the order one statement runs them: licenses, links, events. */
export function insertWrites(db: Kysely<Database>, inserts: readonly LicenseInsert[]) {
  const links = inserts.flatMap((insert) => insert.links)
  const events = inserts.flatMap((insert) => insert.events)
  return [
    db.insertInto('licenses').values(inserts.map((insert) => insert.row)),
    ...(links.length === 0 ? [] : [db.insertInto('license_entitlements').values(links)]),
    ...(events.length === 0 ? [] : [new KyselyEventWriter(db).insertQuery(events)]),
  ]
}

/** A license read by key or id together with the caller's API key (config.confirmsApiKey). */
export interface ConfirmingRead {
  readonly column: 'key' | 'id'
  readonly value: string
  readonly apiKeyId: ApiKeyId
  /** Whether the license's product is read too (`product_usable`); false leaves it null. */
  readonly withProduct: boolean
}

export type ConfirmedRow = LicenseRow & {
  product_usable: number | boolean | null
  /** Its policy's check-in fields (`policyCheckIn`): bigint in PostgreSQL, read as strings. */
  policy_check_in_interval: number | string | null
  policy_grace_period: number | string | null
}

/** What a confirming read found: the license's row if there is one, and whether the API key exists. */
export interface ConfirmedRead {
  readonly row: ConfirmedRow | undefined
  readonly apiKeyLive: boolean
}

/** At most this many requests share one statement. */
const maxGrouped = 64
/** PostgreSQL only: the next statement goes out while this one's requests are answered (StatementGroup). */
const overlapped = { overlap: true }

/**
 * Fast path (docs/decisions/0027-postgresql-shared-statements.md): on PostgreSQL, the requests that arrive together share their statements
 * (storage/statement-group.ts). Each statement is a round trip, a parse and bind, and for a write a
 * commit; on this 2-core machine, the server's CPU per create fell from ~175 to ~75 µs once creates
 * shared them, and PostgreSQL's by about a third.
 *
 * - Creates: the licenses, entitlement links and events of all of them in one INSERT each, in one
 *   statement (`executeAsOne`); each request is answered once that statement has committed. A
 *   create the statement refuses (its product suspended or its API key deleted meanwhile, a
 *   customer deleted) makes the group run again one create at a time, so each hears its own outcome.
 * - Reads of a license by key or id with the caller's API key (validation, retrieval, tokens):
 *   one statement for all, whose text does not change with their number (the values go as arrays),
 *   so PostgreSQL keeps one prepared statement and plan for it. It also says whether each API key
 *   exists when no license is found, which took a second statement before.
 *
 * Only for the statements that run on their own: a store inside a transaction reads and writes in
 * the transaction's snapshot, and SQLite has its own group commit (storage/sqlite-group-commit.ts).
 */
export class LicenseStatementGroups {
  readonly #db: Kysely<Database>
  readonly #inserts: StatementGroup<LicenseInsert>
  readonly #reads = new Map<string, StatementGroup<ConfirmingRead, ConfirmedRead>>()

  constructor(db: Kysely<Database>) {
    this.#db = db
    this.#inserts = new StatementGroup<LicenseInsert>(
      async (inserts) => {
        await executeAsOne(db, insertWrites(db, inserts))
        return []
      },
      maxGrouped,
      overlapped,
    )
  }

  insert(insert: LicenseInsert): Promise<void> {
    return this.#inserts.run(insert)
  }

  findConfirming(read: ConfirmingRead): Promise<ConfirmedRead> {
    const shape = `${read.column} ${read.withProduct}`
    let group = this.#reads.get(shape)
    if (group === undefined) {
      group = new StatementGroup(
        (reads) => this.#readAll(read.column, read.withProduct, reads),
        maxGrouped,
        overlapped,
      )
      this.#reads.set(shape, group)
    }
    return group.run(read)
  }

  async #readAll(
    column: ConfirmingRead['column'],
    withProduct: boolean,
    reads: readonly ConfirmingRead[],
  ): Promise<ConfirmedRead[]> {
    const { rows } = await sql<ConfirmedRow & { n: string; api_key_live: number | null }>`
      select asked.n, (select 1 from api_keys where api_keys.id = asked.api_key_id) as api_key_live, found.*
      from unnest(${reads.map((read) => read.value)}::text[], ${reads.map((read) => read.apiKeyId)}::text[])
        with ordinality as asked(value, api_key_id, n)
      left join lateral (
        select licenses.*, ${entitlementCodes(false)}, ${productUsable(withProduct)} as product_usable,
          ${policyCheckIn(withProduct)}
        from licenses where ${sql.ref(`licenses.${column}`)} = asked.value
      ) as found on true`.execute(this.#db)
    const answers: ConfirmedRead[] = reads.map(() => ({ row: undefined, apiKeyLive: false }))
    for (const { n, api_key_live, ...row } of rows) {
      answers[Number(n) - 1] = {
        row: row.id === null ? undefined : (row as ConfirmedRow),
        apiKeyLive: api_key_live !== null,
      }
    }
    return answers
  }
}
