import type { ActivationId, LicenseId } from '@keyturn/protocol'
import { type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import type { ListRequest, ListSlice } from '../core/list-query.js'
import type { ActivationsTable, Database } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import { column, type ListTable, selectPage } from '../storage/list-sql.js'
import { writeTransaction } from '../storage/write-transaction.js'
import type { Activation } from './activation.js'
import type {
  ActivateOutcome,
  ActivationFilterField,
  ActivationSortField,
  ActivationStore,
  NewActivation,
} from './activation-store.js'

type ActivationRow = Selectable<ActivationsTable>

function rowToActivation(row: ActivationRow): Activation {
  return {
    id: row.id,
    licenseId: row.license_id,
    productId: row.product_id,
    fingerprint: row.fingerprint,
    name: row.name,
    metadata: parseMetadata(row.metadata),
    createdAt: toDate(row.created_at),
    lastSeenAt: toDate(row.last_seen_at),
  }
}

/** SQLite hands JSON back as text, pg as a parsed value. */
function parseMetadata(value: unknown): Record<string, unknown> | null {
  const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...parsed } : null
}

const activationTable: ListTable<ActivationSortField, ActivationFilterField> = {
  table: 'activations',
  sort: {
    createdAt: column('created_at'),
    lastSeenAt: column('last_seen_at'),
    fingerprint: column('fingerprint'),
  },
  filters: {
    createdAt: { column: 'created_at' },
    lastSeenAt: { column: 'last_seen_at' },
    fingerprint: { column: 'fingerprint' },
  },
}

export class KyselyActivationStore implements ActivationStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async activate(activation: NewActivation): Promise<ActivateOutcome> {
    return writeTransaction(this.#db, async (trx) => {
      // undefined: a concurrent request activated the same fingerprint first (its seat was given
      // back), so this one is now a repeat and finds that activation on the second try.
      const outcome = (await this.#activate(trx, activation)) ?? (await this.#activate(trx, activation))
      if (outcome === undefined) {
        throw new Error(`Activation of ${activation.fingerprint} raced twice`)
      }
      return outcome
    })
  }

  async #activate(trx: Kysely<Database>, activation: NewActivation): Promise<ActivateOutcome | undefined> {
    const at = activation.at.toISOString()
    const refreshed = await trx
      .updateTable('activations')
      .set({
        last_seen_at: at,
        ...(activation.name === null ? {} : { name: activation.name }),
        ...(activation.metadata === null ? {} : { metadata: JSON.stringify(activation.metadata) }),
      })
      .where('license_id', '=', activation.licenseId)
      .where('fingerprint', '=', activation.fingerprint)
      .returningAll()
      .executeTakeFirst()
    if (refreshed !== undefined) {
      return { kind: 'existing', activation: rowToActivation(refreshed) }
    }

    // The guard and the increment are one statement: under concurrency the database serialises them
    // on the license row, so the count never passes the limit.
    const seat = await trx
      .updateTable('licenses')
      .set({ activation_count: sql`activation_count + 1` })
      .where('id', '=', activation.licenseId)
      .where(sql<SqlBool>`(max_activations is null or activation_count < max_activations)`)
      .returning('activation_count')
      .executeTakeFirst()
    if (seat === undefined) {
      const license = await trx
        .selectFrom('licenses')
        .select(['max_activations', 'activation_count'])
        .where('id', '=', activation.licenseId)
        .executeTakeFirstOrThrow()
      return {
        kind: 'limit_reached',
        limit: Number(license.max_activations),
        count: Number(license.activation_count),
      }
    }

    const inserted = await trx
      .insertInto('activations')
      .values({
        id: activation.id,
        license_id: activation.licenseId,
        product_id: activation.productId,
        fingerprint: activation.fingerprint,
        name: activation.name,
        metadata: activation.metadata === null ? null : JSON.stringify(activation.metadata),
        created_at: at,
        last_seen_at: at,
      })
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
      return undefined
    }
    return { kind: 'created', activation: rowToActivation(inserted) }
  }

  async deactivate(id: ActivationId): Promise<Activation | undefined> {
    return writeTransaction(this.#db, async (trx) => {
      const deleted = await trx
        .deleteFrom('activations')
        .where('id', '=', id)
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

  async findById(id: ActivationId): Promise<Activation | undefined> {
    const row = await this.#db.selectFrom('activations').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : rowToActivation(row)
  }

  async findByFingerprint(licenseId: LicenseId, fingerprint: string): Promise<Activation | undefined> {
    const row = await this.#db
      .selectFrom('activations')
      .selectAll()
      .where('license_id', '=', licenseId)
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirst()
    return row === undefined ? undefined : rowToActivation(row)
  }

  async list(
    licenseId: LicenseId,
    request: ListRequest<ActivationSortField, ActivationFilterField>,
  ): Promise<ListSlice<Activation>> {
    const scope = [sql<SqlBool>`activations.license_id = ${licenseId}`]
    const slice = await selectPage<ActivationRow, ActivationSortField, ActivationFilterField>(
      this.#db,
      activationTable,
      request,
      scope,
    )
    return { ...slice, items: slice.items.map(rowToActivation) }
  }
}
