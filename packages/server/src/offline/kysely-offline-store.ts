import type { ActivationId, LicenseId, ProductId } from '@keyturn/protocol'
import { type Kysely, sql } from 'kysely'
import { type Database, toDate, toNullableDate } from '../storage/database.js'
import type { OfflineRequestRecord, OfflineStore } from './offline-store.js'

export class KyselyOfflineStore implements OfflineStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async licensesByKeyHint(productId: ProductId, keyHint: string): Promise<readonly LicenseId[]> {
    const rows = await this.#db
      .selectFrom('licenses')
      .select('id')
      .where('product_id', '=', productId)
      .where('key_hint', '=', keyHint)
      .limit(10)
      .execute()
    return rows.map((row) => row.id)
  }

  async findRequest(licenseId: LicenseId, nonce: string): Promise<OfflineRequestRecord | undefined> {
    const row = await this.#db
      .selectFrom('offline_requests')
      .select(['activation_id', 'issued_at'])
      .where('license_id', '=', licenseId)
      .where('nonce', '=', nonce)
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : { activationId: row.activation_id, issuedAt: toDate(row.issued_at) }
  }

  async recordRequest(
    licenseId: LicenseId,
    nonce: string,
    record: OfflineRequestRecord,
  ): Promise<OfflineRequestRecord> {
    await this.#db
      .insertInto('offline_requests')
      .values({
        license_id: licenseId,
        nonce,
        activation_id: record.activationId,
        issued_at: record.issuedAt.toISOString(),
      })
      .onConflict((conflict) => conflict.columns(['license_id', 'nonce']).doNothing())
      .execute()
    return (await this.findRequest(licenseId, nonce)) ?? record
  }

  async lockedUntil(activationId: ActivationId): Promise<Date | null> {
    const row = await this.#db
      .selectFrom('offline_deactivation_locks')
      .select('locked_until')
      .where('activation_id', '=', activationId)
      .executeTakeFirst()
    return toNullableDate(row?.locked_until ?? null)
  }

  async recordFailure(activationId: ActivationId, limit: number, lockUntil: Date): Promise<number> {
    // One statement: the count rises atomically, and the failure that reaches the limit sets the
    // lock and starts the count again (for the tries after the lock ends).
    const row = await this.#db
      .insertInto('offline_deactivation_locks')
      .values({ activation_id: activationId, failures: 1, locked_until: null })
      .onConflict((conflict) =>
        conflict.column('activation_id').doUpdateSet({
          failures: sql`case when offline_deactivation_locks.failures + 1 >= ${limit} then 0 else offline_deactivation_locks.failures + 1 end`,
          locked_until: sql`case when offline_deactivation_locks.failures + 1 >= ${limit} then ${lockUntil.toISOString()} else offline_deactivation_locks.locked_until end`,
        }),
      )
      .returning(['failures', 'locked_until'])
      .executeTakeFirstOrThrow()
    return row.failures === 0 ? limit : Number(row.failures)
  }
}
