import type { ActivationId, LicenseId } from '@keyturn/protocol'
import { type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import type { Event } from '../core/unit-of-work.js'
import { isDeadlock, isUniqueViolation } from '../storage/constraint-violations.js'
import type { ActivationsTable, Database } from '../storage/database.js'
import { toDate, toNullableDate } from '../storage/database.js'
import { bytewise, column, type ListTable, selectPage } from '../storage/list-sql.js'
import { lockLicense } from '../storage/lock-license.js'
import { runsAlone } from '../storage/one-statement.js'
import { isSqlite, writeTransaction } from '../storage/write-transaction.js'
import { type Activation, leaseEnd } from './activation.js'
import type {
  ActivateOutcome,
  ActivationFilterField,
  ActivationScope,
  ActivationSortField,
  ActivationStore,
  HeartbeatTarget,
  NewActivation,
} from './activation-store.js'
import { type ActivationStatementGroups, hasFreeSeat } from './kysely-activation-statement-groups.js'

type ActivationRow = Selectable<ActivationsTable>

export function rowToActivation(row: ActivationRow): Activation {
  return {
    id: row.id,
    licenseId: row.license_id,
    productId: row.product_id,
    fingerprint: row.fingerprint,
    name: row.name,
    metadata: parseMetadata(row.metadata),
    createdAt: toDate(row.created_at),
    lastSeenAt: toDate(row.last_seen_at),
    lastHeartbeatAt: toDate(row.last_heartbeat_at ?? row.last_seen_at),
    expiresAt: toNullableDate(row.expires_at),
  }
}

/**
 * Removes a license's activations lapsed at `at` (only that machine's, given a fingerprint; only
 * those of `ids`, given ids) and takes them off the license's activation count. The caller holds
 * the license row's lock (storage/lock-license.ts).
 */
export async function removeLapsedActivations(
  trx: Kysely<Database>,
  licenseId: LicenseId,
  at: string,
  only?: { readonly fingerprint: string } | { readonly ids: readonly ActivationId[] },
): Promise<Activation[]> {
  let query = trx.deleteFrom('activations').where('license_id', '=', licenseId)
  if (only !== undefined && 'fingerprint' in only) {
    query = query.where('fingerprint', '=', only.fingerprint)
  }
  if (only !== undefined && 'ids' in only) {
    query = query.where('id', 'in', only.ids)
  }
  const removed = await query.where('expires_at', '<=', at).returningAll().execute()
  if (removed.length > 0) {
    await trx
      .updateTable('licenses')
      .set({ activation_count: sql`activation_count - ${removed.length}` })
      .where('id', '=', licenseId)
      .execute()
  }
  return removed.map(rowToActivation)
}

/** SQLite hands JSON back as text, pg as a parsed value. */
function parseMetadata(value: unknown): Record<string, unknown> | null {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : null
}

/** A new activation's row. */
function newActivationRow(activation: NewActivation) {
  const at = activation.at.toISOString()
  return {
    id: activation.id,
    license_id: activation.licenseId,
    product_id: activation.productId,
    fingerprint: activation.fingerprint,
    name: activation.name,
    metadata: activation.metadata === null ? null : JSON.stringify(activation.metadata),
    created_at: at,
    last_seen_at: at,
    last_heartbeat_at: at,
    expires_at: leaseEnd(activation.at, activation.heartbeatTtl)?.toISOString() ?? null,
  }
}

/** The activation holds its seat at `at`: no lease, or one that has not lapsed. */
function alive(at: string, table = 'activations'): RawBuilder<SqlBool> {
  const expiresAt = sql.ref(`${table}.expires_at`)
  return sql<SqlBool>`(${expiresAt} is null or ${expiresAt} > ${at})`
}

const activationTable: ListTable<ActivationSortField, ActivationFilterField> = {
  table: 'activations',
  sort: {
    createdAt: column('created_at'),
    lastSeenAt: column('last_seen_at'),
    fingerprint: bytewise('fingerprint'), // alike on both engines, whatever PostgreSQL's collation
  },
  filters: {
    createdAt: { column: 'created_at' },
    lastSeenAt: { column: 'last_seen_at' },
    fingerprint: { column: 'fingerprint' },
    productId: { column: 'product_id' },
    licenseId: { column: 'license_id' },
  },
}

export class KyselyActivationStore implements ActivationStore {
  readonly #db: Kysely<Database>
  readonly #sqlite: boolean
  readonly #groups: ActivationStatementGroups

  /** `groups`: shared by the app's stores, so that their activations on PostgreSQL share statements. */
  constructor(db: Kysely<Database>, groups: ActivationStatementGroups) {
    this.#db = db
    this.#sqlite = isSqlite(db)
    this.#groups = groups
  }

  async activate(
    activation: NewActivation,
    options: { readonly renewalTried?: boolean } = {},
  ): Promise<ActivateOutcome> {
    return writeTransaction(this.#db, async (trx) => {
      // 'raced': the insert met an activation of the same fingerprint (its seat was given back):
      // a concurrent request's, which the second try finds as a repeat, or this machine's own
      // lapsed one, which the second try removes first. What the first try reclaimed is gone all
      // the same: it stays in the outcome, so no expiry goes unrecorded.
      const first = await this.#activate(
        trx,
        activation,
        options.renewalTried === true ? 'after renewal' : 'first',
      )
      if (first.kind !== 'raced') {
        return first
      }
      const second = await this.#activate(trx, activation, 'second')
      if (second.kind === 'raced') {
        throw new Error(`Activation of ${activation.fingerprint} raced twice`)
      }
      return { ...second, reclaimed: [...first.reclaimed, ...second.reclaimed] }
    })
  }

  async insertImported(activations: readonly NewActivation[]): Promise<void> {
    if (activations.length > 0) {
      await this.#db.insertInto('activations').values(activations.map(newActivationRow)).execute()
    }
  }

  async renewAlone(activation: NewActivation): Promise<Activation | 'no_seat' | 'not_tried'> {
    if (!runsAlone(this.#db)) {
      return 'not_tried'
    }
    const at = activation.at.toISOString()
    const expiresAt = leaseEnd(activation.at, activation.heartbeatTtl)?.toISOString() ?? null
    const renewed = await this.#groups.renew({
      licenseId: activation.licenseId,
      fingerprint: activation.fingerprint,
      at,
      expiresAt,
      name: activation.name,
      metadata: activation.metadata === null ? null : JSON.stringify(activation.metadata),
    })
    return renewed === undefined ? 'no_seat' : rowToActivation(renewed)
  }

  async activateAlone(activation: NewActivation, events: readonly Event[]): Promise<'done' | 'not_done'> {
    if (!runsAlone(this.#db) || activation.awaitsFirstActivation) {
      return 'not_done'
    }
    try {
      return (await this.#groups.takeSeat({ activation, events })) ? 'done' : 'not_done'
    } catch (error) {
      // The statement wrote nothing (a machine that has an activation fails its unique fingerprint;
      // a deadlock's victim): the transaction's way retries it.
      if (isUniqueViolation(error) || isDeadlock(error)) {
        return 'not_done'
      }
      throw error
    }
  }

  /**
   * One try. The first does not look for this machine's own lapsed activation: it is rare, and the
   * insert meets it as a conflict, which makes the try 'raced'. The second removes it first. That
   * saves a statement on every new activation (11 → 10 round trips on PostgreSQL). A first try
   * 'after renewal' (`renewAlone` found no seat a moment ago) does not renew either: a machine
   * activated since is met by the insert the same way (one round trip fewer again).
   */
  async #activate(
    trx: Kysely<Database>,
    activation: NewActivation,
    attempt: 'first' | 'after renewal' | 'second',
  ): Promise<ActivateOutcome | { readonly kind: 'raced'; readonly reclaimed: readonly Activation[] }> {
    const at = activation.at.toISOString()
    const expiresAt = leaseEnd(activation.at, activation.heartbeatTtl)?.toISOString() ?? null
    const refreshed =
      attempt === 'after renewal' ? undefined : await this.#refresh(trx, activation, at, expiresAt)
    if (refreshed !== undefined) {
      return { kind: 'existing', activation: refreshed, reclaimed: [] }
    }

    let reclaimed: Activation[] = []
    let seat = await this.#takeSeat(trx, activation.licenseId)
    if (seat) {
      // The license row is locked now. This machine's own lapsed activation, if any, gives way.
      if (attempt === 'second') {
        reclaimed = await removeLapsedActivations(trx, activation.licenseId, at, {
          fingerprint: activation.fingerprint,
        })
      }
    } else {
      // Full: lapsed activations hold no seat, so give theirs up, with the license row locked so a
      // concurrent transaction cannot count the same seats free twice.
      await lockLicense(trx, activation.licenseId)
      reclaimed = await removeLapsedActivations(trx, activation.licenseId, at)
      seat = reclaimed.length > 0 && (await this.#takeSeat(trx, activation.licenseId))
    }
    if (!seat) {
      // The license row is locked: a concurrent activation of this very fingerprint that took the
      // last seat has committed and is visible now. Then this is a repeat, not a refusal.
      const repeated = await this.#refresh(trx, activation, at, expiresAt)
      if (repeated !== undefined) {
        return { kind: 'existing', activation: repeated, reclaimed }
      }
      const license = await trx
        .selectFrom('licenses')
        .select(['max_activations', 'activation_count'])
        .where('id', '=', activation.licenseId)
        .executeTakeFirstOrThrow()
      return {
        kind: 'limit_reached',
        limit: Number(license.max_activations),
        count: Number(license.activation_count),
        reclaimed,
      }
    }

    const inserted = await trx
      .insertInto('activations')
      .values(newActivationRow(activation))
      .onConflict((conflict) => conflict.columns(['license_id', 'fingerprint']).doNothing())
      .returningAll()
      .executeTakeFirst()
    if (inserted === undefined) {
      // Give the seat back within the same transaction (it may be the caller's unit of work, so a
      // rollback is not ours to make).
      await trx
        .updateTable('licenses')
        .set({ activation_count: sql`activation_count - 1` })
        .where('id', '=', activation.licenseId)
        .execute()
      return { kind: 'raced', reclaimed }
    }
    if (!activation.awaitsFirstActivation) {
      return { kind: 'created', activation: rowToActivation(inserted), reclaimed, expirationStarted: null }
    }
    // A license waiting for its first activation (a `firstActivation` policy) starts to expire now:
    // the seat increment above holds the license row, so exactly one activation does this.
    const startsExpiry = this.#sqlite
      ? sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', ${at}, '+' || first_activation_duration || ' seconds')`
      : sql<string>`${at}::timestamptz + make_interval(secs => first_activation_duration)`
    const started = await trx
      .updateTable('licenses')
      .set({ expiration_date: startsExpiry, first_activation_duration: null })
      .where('id', '=', activation.licenseId)
      .where('first_activation_duration', 'is not', null)
      .returning('expiration_date')
      .executeTakeFirst()
    return {
      kind: 'created',
      activation: rowToActivation(inserted),
      reclaimed,
      expirationStarted: started === undefined ? null : toNullableDate(started.expiration_date),
    }
  }

  /** Renews the fingerprint's activation if it holds its seat at `at` (a repeat activation). */
  async #refresh(
    trx: Kysely<Database>,
    activation: NewActivation,
    at: string,
    expiresAt: string | null,
  ): Promise<Activation | undefined> {
    const refreshed = await trx
      .updateTable('activations')
      .set({
        last_seen_at: at,
        last_heartbeat_at: at,
        expires_at: expiresAt,
        ...(activation.name === null ? {} : { name: activation.name }),
        ...(activation.metadata === null ? {} : { metadata: JSON.stringify(activation.metadata) }),
      })
      .where('license_id', '=', activation.licenseId)
      .where('fingerprint', '=', activation.fingerprint)
      .where(alive(at))
      .returningAll()
      .executeTakeFirst()
    return refreshed === undefined ? undefined : rowToActivation(refreshed)
  }

  /**
   * The guard and the increment are one statement: under concurrency the database serialises them
   * on the license row, so the count never passes the limit.
   */
  async #takeSeat(trx: Kysely<Database>, licenseId: LicenseId): Promise<boolean> {
    const seat = await trx
      .updateTable('licenses')
      .set({ activation_count: sql`activation_count + 1` })
      .where('id', '=', licenseId)
      .where(hasFreeSeat)
      .returning('activation_count')
      .executeTakeFirst()
    return seat !== undefined
  }

  async heartbeat(
    target: HeartbeatTarget,
    at: Date,
    heartbeatTtl: number | null,
  ): Promise<Activation | undefined> {
    const now = at.toISOString()
    let query = this.#db
      .updateTable('activations')
      .set({
        last_seen_at: now,
        last_heartbeat_at: now,
        expires_at: leaseEnd(at, heartbeatTtl)?.toISOString() ?? null,
      })
      .where(alive(now))
    query =
      'id' in target
        ? query.where('id', '=', target.id)
        : query.where('license_id', '=', target.licenseId).where('fingerprint', '=', target.fingerprint)
    const row = await query.returningAll().executeTakeFirst()
    return row === undefined ? undefined : rowToActivation(row)
  }

  async deactivate(id: ActivationId, at: Date): Promise<Activation | undefined> {
    const now = at.toISOString()
    return writeTransaction(this.#db, async (trx) => {
      const found = await trx
        .selectFrom('activations')
        .select('license_id')
        .where('id', '=', id)
        .executeTakeFirst()
      if (found === undefined) {
        return undefined
      }
      await lockLicense(trx, found.license_id)
      const deleted = await trx
        .deleteFrom('activations')
        .where('id', '=', id)
        .where(alive(now))
        .returningAll()
        .executeTakeFirst()
      if (deleted !== undefined) {
        await trx
          .updateTable('licenses')
          .set({ activation_count: sql`activation_count - 1` })
          .where('id', '=', deleted.license_id)
          .execute()
      }
      return deleted === undefined ? undefined : rowToActivation(deleted)
    })
  }

  async findById(id: ActivationId, at: Date): Promise<Activation | undefined> {
    const row = await this.#db
      .selectFrom('activations')
      .selectAll()
      .where('id', '=', id)
      .where(alive(at.toISOString()))
      .executeTakeFirst()
    return row === undefined ? undefined : rowToActivation(row)
  }

  async findByFingerprint(
    licenseId: LicenseId,
    fingerprint: string,
    at: Date,
  ): Promise<Activation | undefined> {
    const row = await this.#db
      .selectFrom('activations')
      .selectAll()
      .where('license_id', '=', licenseId)
      .where('fingerprint', '=', fingerprint)
      .where(alive(at.toISOString()))
      .executeTakeFirst()
    return row === undefined ? undefined : rowToActivation(row)
  }

  async countLapsed(licenseIds: readonly LicenseId[], at: Date): Promise<ReadonlyMap<LicenseId, number>> {
    if (licenseIds.length === 0) {
      return new Map()
    }
    const rows = await this.#db
      .selectFrom('activations')
      .select(['license_id', (eb) => eb.fn.countAll().as('lapsed')])
      .where('license_id', 'in', licenseIds)
      .where('expires_at', '<=', at.toISOString())
      .groupBy('license_id')
      .execute()
    // pg reads count(*) as a string
    return new Map(rows.map((row) => [row.license_id, Number(row.lapsed)]))
  }

  async listAll(
    request: ListRequest<ActivationSortField, ActivationFilterField>,
    scope: ActivationScope,
    at: Date,
  ): Promise<ListSlice<Activation>> {
    const conditions = [alive(at.toISOString())]
    if (scope.productId !== undefined) {
      conditions.push(sql<SqlBool>`activations.product_id = ${scope.productId}`)
    }
    if (scope.licenseId !== undefined) {
      conditions.push(sql<SqlBool>`activations.license_id = ${scope.licenseId}`)
    }
    const slice = await selectPage<ActivationRow, ActivationSortField, ActivationFilterField>(
      this.#db,
      activationTable,
      request,
      conditions,
    )
    return { ...slice, items: slice.items.map(rowToActivation) }
  }

  async list(
    licenseId: LicenseId,
    request: ListRequest<ActivationSortField, ActivationFilterField>,
    at: Date,
  ): Promise<ListSlice<Activation>> {
    const scope = [sql<SqlBool>`activations.license_id = ${licenseId}`, alive(at.toISOString())]
    const slice = await selectPage<ActivationRow, ActivationSortField, ActivationFilterField>(
      this.#db,
      activationTable,
      request,
      scope,
    )
    return { ...slice, items: slice.items.map(rowToActivation) }
  }
}
