import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'
import type { Connection } from './connect.js'
import type { DatabaseKind } from './database.js'
import { initialSchema } from './migrations/2026-11-21-00-initial-schema.js'
import { activations } from './migrations/2026-11-21-01-activations.js'
import { idempotencyKeys } from './migrations/2026-11-21-02-idempotency-keys.js'
import { listIndexes } from './migrations/2026-11-21-03-list-indexes.js'
import { clientTokenTtl } from './migrations/2026-11-23-30-client-token-ttl.js'
import { durationsBigint } from './migrations/2026-11-23-31-durations-bigint.js'
import { events } from './migrations/2026-11-23-40-events.js'
import { webhooks } from './migrations/2026-11-23-41-webhooks.js'
import { vendors } from './migrations/2026-11-23-50-vendors.js'
import { policySeatsAndUsage } from './migrations/2026-11-23-51-policy-seats-and-usage.js'
import { floatingSeatsAndUsage } from './migrations/2026-11-23-60-floating-seats-and-usage.js'
import { productSignResponses } from './migrations/2026-11-23-70-product-sign-responses.js'
import { activationListIndexes } from './migrations/2026-11-23-80-activation-list-indexes.js'
import { eventLicenseId } from './migrations/2026-11-23-81-event-license-id.js'
import { licenseCounts } from './migrations/2026-11-23-90-license-counts.js'
import { licenseMetadata } from './migrations/2026-11-27-00-license-metadata.js'
import { secretCheck } from './migrations/2026-11-28-70-secret-check.js'
import { mailOutbox } from './migrations/2026-11-28-80-mail-outbox.js'
import { policyFileFields } from './migrations/2026-11-29-10-policy-file-fields.js'
import { sessions } from './migrations/2026-11-29-30-sessions.js'
import { operators } from './migrations/2026-11-29-31-operators.js'
import { expiryNotices } from './migrations/2026-11-29-40-expiry-notices.js'
import { productBranding } from './migrations/2026-11-29-41-product-branding.js'
import { portal } from './migrations/2026-11-29-42-portal.js'
import { searchIndexes } from './migrations/2026-11-29-80-search-indexes.js'
import { eventActors } from './migrations/2026-11-30-05-event-actors.js'
import { offlineActivation } from './migrations/2026-11-30-10-offline-activation.js'
import { policyCheckIn } from './migrations/2026-11-30-20-policy-check-in.js'
import { operatorFactors } from './migrations/2026-11-30-35-operator-factors.js'
import { integrations } from './migrations/2026-11-30-50-integrations.js'
import { paymentGrace } from './migrations/2026-11-30-51-payment-grace.js'
import { seatsPerQuantity } from './migrations/2026-11-30-52-seats-per-quantity.js'
import { licenseExternalId } from './migrations/2026-11-30-60-license-external-id.js'
import { dailyStats } from './migrations/2026-11-30-80-daily-stats.js'
import { revenueStats } from './migrations/2026-12-01-80-revenue-stats.js'
import { failingDeliveries } from './migrations/2026-12-01-81-failing-deliveries.js'

/**
 * Every migration: an explicit list, never a directory scan. Kysely applies pending ones in the
 * names' alphabetical order, so names are the date plus a sequence number within the day. Work done
 * in parallel takes numbers from separate slots (docs/decisions/0022-webhooks.md), so a database may already have
 * run a later-numbered migration when an earlier-numbered one lands: each migration depends only on
 * tables of migrations merged before it, and they run unordered (`allowUnorderedMigrations`).
 */
function migrations(kind: DatabaseKind): Record<string, Migration> {
  return {
    '2026-11-21-00-initial-schema': initialSchema(kind),
    '2026-11-21-01-activations': activations(kind),
    '2026-11-21-02-idempotency-keys': idempotencyKeys(kind),
    '2026-11-21-03-list-indexes': listIndexes(),
    '2026-11-23-30-client-token-ttl': clientTokenTtl(),
    '2026-11-23-31-durations-bigint': durationsBigint(kind),
    '2026-11-23-40-events': events(kind),
    '2026-11-23-41-webhooks': webhooks(kind),
    '2026-11-23-60-floating-seats-and-usage': floatingSeatsAndUsage(kind),
    '2026-11-23-70-product-sign-responses': productSignResponses(),
    '2026-11-23-50-vendors': vendors(kind),
    '2026-11-23-51-policy-seats-and-usage': policySeatsAndUsage(kind),
    '2026-11-23-80-activation-list-indexes': activationListIndexes(),
    '2026-11-23-81-event-license-id': eventLicenseId(kind),
    '2026-11-23-90-license-counts': licenseCounts(kind),
    '2026-11-27-00-license-metadata': licenseMetadata(kind),
    '2026-11-28-70-secret-check': secretCheck(),
    '2026-11-28-80-mail-outbox': mailOutbox(kind),
    '2026-11-29-10-policy-file-fields': policyFileFields(kind),
    '2026-11-29-30-sessions': sessions(kind),
    '2026-11-29-31-operators': operators(kind),
    '2026-11-29-40-expiry-notices': expiryNotices(kind),
    '2026-11-29-41-product-branding': productBranding(),
    '2026-11-29-42-portal': portal(kind),
    '2026-11-29-80-search-indexes': searchIndexes(kind),
    '2026-11-30-05-event-actors': eventActors(),
    '2026-11-30-10-offline-activation': offlineActivation(kind),
    '2026-11-30-20-policy-check-in': policyCheckIn(kind),
    '2026-11-30-80-daily-stats': dailyStats(kind),
    '2026-11-30-50-integrations': integrations(kind),
    '2026-11-30-51-payment-grace': paymentGrace(kind),
    '2026-11-30-52-seats-per-quantity': seatsPerQuantity(),
    '2026-11-30-60-license-external-id': licenseExternalId(),
    '2026-11-30-35-operator-factors': operatorFactors(kind),
    '2026-12-01-80-revenue-stats': revenueStats(kind),
    '2026-12-01-81-failing-deliveries': failingDeliveries(),
  }
}

class ListedMigrations implements MigrationProvider {
  readonly #kind: DatabaseKind
  constructor(kind: DatabaseKind) {
    this.#kind = kind
  }
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations(this.#kind)
  }
}

/**
 * Applies every pending migration; returns the names applied. Several processes may start at once:
 * on PostgreSQL Kysely's migrator takes an advisory lock. On SQLite it takes none and its deferred
 * transaction lets two processes read "nothing applied" and then collide on the DDL, so Keyturn holds
 * SQLite's write lock (`BEGIN IMMEDIATE`, waiting up to busy_timeout) around the whole migration: the
 * second process waits, then finds everything applied.
 */
export async function migrateToLatest(connection: Connection): Promise<string[]> {
  const isSqlite = connection.kind === 'sqlite'
  const migrator = new Migrator({
    db: connection.db as unknown as Kysely<unknown>, // migrations see a frozen, untyped schema
    provider: new ListedMigrations(connection.kind),
    // Kysely looks for its bookkeeping tables in every schema unless told which one: another
    // schema's tables (a second Keyturn, a parallel test) would make it skip creating its own.
    migrationTableSchema: isSqlite ? undefined : await currentSchema(connection),
    // SQLite: the transaction is ours (below); its driver has one connection, so it spans every query.
    disableTransactions: isSqlite,
    // A migration that sorts before ones already applied (a slot merged later) is applied, not refused.
    allowUnorderedMigrations: true,
  })
  if (isSqlite) {
    await sql`begin immediate`.execute(connection.db)
  }
  const { error, results = [] } = await migrator.migrateToLatest()
  if (isSqlite) {
    await sql.raw(error === undefined ? 'commit' : 'rollback').execute(connection.db)
  }
  if (error !== undefined) {
    throw new Error('Database migration failed', { cause: error })
  }
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName)
}

/** The schema unqualified names resolve to: the first of the search_path (`?options=-c search_path=…`). */
async function currentSchema(connection: Connection): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(connection.db)
  const schema = rows[0]?.schema
  if (schema === undefined) {
    throw new Error('The database has no current schema: check search_path')
  }
  return schema
}
