import type {
  CustomerId,
  IntegrationId,
  IntegrationMapping,
  IntegrationProvider,
  LicenseId,
} from '@keyturn/protocol'
import type { Kysely, Selectable } from 'kysely'
import { type Database, type IntegrationsTable, toDate } from '../storage/database.js'
import type { Integration } from './integration.js'
import type {
  IntegrationChanges,
  IntegrationStore,
  NewReceivedEvent,
  PendingEvent,
  ReceivedEvent,
  StoredIntegration,
} from './integration-store.js'

type IntegrationRow = Selectable<IntegrationsTable>

function parseJson(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value // text in SQLite, jsonb in PostgreSQL
}

function rowToIntegration(row: IntegrationRow): Integration {
  return {
    id: row.id as IntegrationId, // written only from newId('integration')
    provider: row.provider as IntegrationProvider,
    description: row.description,
    mappings: parseJson(row.mappings) as IntegrationMapping[],
    onRefund: row.on_refund === 'none' ? 'none' : 'revoke',
    paymentGraceDays: Number(row.payment_grace_days),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

export class KyselyIntegrationStore implements IntegrationStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  #json(value: unknown): string {
    return JSON.stringify(value) // SQLite keeps text; PostgreSQL casts the text to jsonb
  }

  #time(value: Date): string {
    return value.toISOString()
  }

  async insert(integration: Integration, signingSecretEncrypted: string): Promise<void> {
    await this.#db
      .insertInto('integrations')
      .values({
        id: integration.id,
        provider: integration.provider,
        description: integration.description,
        signing_secret_encrypted: signingSecretEncrypted,
        mappings: this.#json(integration.mappings),
        on_refund: integration.onRefund,
        payment_grace_days: integration.paymentGraceDays,
        created_at: this.#time(integration.createdAt),
        updated_at: this.#time(integration.updatedAt),
      })
      .execute()
  }

  async find(id: IntegrationId): Promise<StoredIntegration | undefined> {
    const row = await this.#db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined
      ? undefined
      : { integration: rowToIntegration(row), signingSecretEncrypted: row.signing_secret_encrypted }
  }

  async list(): Promise<Integration[]> {
    const rows = await this.#db
      .selectFrom('integrations')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    return rows.map(rowToIntegration)
  }

  async count(): Promise<number> {
    const row = await this.#db
      .selectFrom('integrations')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async update(id: IntegrationId, changes: IntegrationChanges): Promise<Integration | undefined> {
    const values = {
      updated_at: this.#time(changes.updatedAt),
      ...(changes.description === undefined ? {} : { description: changes.description }),
      ...(changes.mappings === undefined ? {} : { mappings: this.#json(changes.mappings) }),
      ...(changes.onRefund === undefined ? {} : { on_refund: changes.onRefund }),
      ...(changes.paymentGraceDays === undefined ? {} : { payment_grace_days: changes.paymentGraceDays }),
      ...(changes.signingSecretEncrypted === undefined
        ? {}
        : { signing_secret_encrypted: changes.signingSecretEncrypted }),
    }
    await this.#db.updateTable('integrations').set(values).where('id', '=', id).execute()
    return (await this.find(id))?.integration
  }

  async delete(id: IntegrationId): Promise<boolean> {
    // Children first, explicitly: the same on both engines whatever SQLite's foreign_keys setting.
    await this.#db.deleteFrom('integration_events').where('integration_id', '=', id).execute()
    await this.#db.deleteFrom('integration_links').where('integration_id', '=', id).execute()
    const result = await this.#db.deleteFrom('integrations').where('id', '=', id).executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  async recordReceived(id: IntegrationId, event: NewReceivedEvent): Promise<boolean> {
    const result = await this.#db
      .insertInto('integration_events')
      .values({
        integration_id: id,
        dedupe_key: event.dedupeKey,
        event_type: event.eventType,
        status: event.status,
        outcome: event.outcome,
        payload: event.payload === undefined ? null : this.#json(event.payload),
        next_attempt_at: event.status === 'pending' ? this.#time(event.receivedAt) : null,
        attempts: 1, // the first attempt is made at receipt, in the same transaction
        received_at: this.#time(event.receivedAt),
        updated_at: this.#time(event.receivedAt),
      })
      .onConflict((oc) => oc.columns(['integration_id', 'dedupe_key']).doNothing())
      .returning('dedupe_key')
      .executeTakeFirst()
    return result !== undefined // no row returned: the key was already there
  }

  async settle(
    id: IntegrationId,
    dedupeKey: string,
    status: ReceivedEvent['status'],
    outcome: string,
    at: Date,
    nextAttemptAt?: Date,
  ): Promise<void> {
    await this.#db
      .updateTable('integration_events')
      .set({
        status,
        outcome,
        payload: status === 'pending' ? undefined : null,
        next_attempt_at: status === 'pending' ? this.#time(nextAttemptAt ?? at) : null,
        updated_at: this.#time(at),
      })
      .where('integration_id', '=', id)
      .where('dedupe_key', '=', dedupeKey)
      .execute()
  }

  async duePending(
    now: Date,
    limit: number,
  ): Promise<{ readonly integrationId: IntegrationId; readonly dedupeKey: string }[]> {
    const rows = await this.#db
      .selectFrom('integration_events')
      .select(['integration_id', 'dedupe_key'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', this.#time(now))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute()
    return rows.map((row) => ({
      integrationId: row.integration_id as IntegrationId,
      dedupeKey: row.dedupe_key,
    }))
  }

  async claimPending(id: IntegrationId, dedupeKey: string, now: Date): Promise<PendingEvent | undefined> {
    // An update takes the row: a second process's waits, then finds it no longer due.
    const row = await this.#db
      .updateTable('integration_events')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('integration_id', '=', id)
      .where('dedupe_key', '=', dedupeKey)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', this.#time(now))
      .returning(['event_type', 'payload', 'attempts', 'received_at'])
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : {
          eventType: row.event_type,
          payload: parseJson(row.payload),
          attempts: Number(row.attempts),
          receivedAt: toDate(row.received_at),
        }
  }

  async customerIdByEmail(email: string): Promise<CustomerId | undefined> {
    const row = await this.#db
      .selectFrom('customers')
      .select('id')
      .where('email', '=', email)
      .executeTakeFirst()
    return row?.id as CustomerId | undefined
  }

  async link(
    id: IntegrationId,
    objectKind: string,
    objectId: string,
    customerId: CustomerId | null,
    licenseId: LicenseId | null,
    at: Date,
  ): Promise<void> {
    await this.#db
      .insertInto('integration_links')
      .values({
        integration_id: id,
        object_kind: objectKind,
        object_id: objectId,
        customer_id: customerId,
        license_id: licenseId,
        created_at: this.#time(at),
      })
      .execute()
  }

  async linkedLicense(
    id: IntegrationId,
    objectKind: string,
    objectId: string,
  ): Promise<LicenseId | undefined> {
    const row = await this.#db
      .selectFrom('integration_links')
      .select('license_id')
      .where('integration_id', '=', id)
      .where('object_kind', '=', objectKind)
      .where('object_id', '=', objectId)
      .executeTakeFirst()
    return row?.license_id ?? undefined
  }

  async linkedCustomer(
    id: IntegrationId,
    objectKind: string,
    objectId: string,
  ): Promise<CustomerId | undefined> {
    const row = await this.#db
      .selectFrom('integration_links')
      .select('customer_id')
      .where('integration_id', '=', id)
      .where('object_kind', '=', objectKind)
      .where('object_id', '=', objectId)
      .executeTakeFirst()
    return (row?.customer_id as CustomerId | null | undefined) ?? undefined
  }

  async recentEvents(id: IntegrationId, limit: number): Promise<ReceivedEvent[]> {
    const rows = await this.#db
      .selectFrom('integration_events')
      .selectAll()
      .where('integration_id', '=', id)
      .orderBy('received_at', 'desc')
      .orderBy('dedupe_key', 'desc')
      .limit(limit)
      .execute()
    return rows.map((row) => ({
      dedupeKey: row.dedupe_key,
      eventType: row.event_type,
      status: row.status as ReceivedEvent['status'],
      outcome: row.outcome,
      attempts: Number(row.attempts),
      nextAttemptAt: row.next_attempt_at === null ? null : toDate(row.next_attempt_at),
      receivedAt: toDate(row.received_at),
      updatedAt: toDate(row.updated_at),
    }))
  }
}
