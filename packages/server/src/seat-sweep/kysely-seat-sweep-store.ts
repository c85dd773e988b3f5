import type { ActivationId, LicenseId } from '@keyturn/protocol'
import type { Kysely } from 'kysely'
import type { Activation } from '../activations/activation.js'
import { removeLapsedActivations } from '../activations/kysely-activation-store.js'
import type { Database } from '../storage/database.js'
import { lockLicense } from '../storage/lock-license.js'
import { writeTransaction } from '../storage/write-transaction.js'
import type { LapsedActivation, SeatSweepStore } from './seat-sweep-store.js'

export class KyselySeatSweepStore implements SeatSweepStore {
  readonly #db: Kysely<Database>

  constructor(db: Kysely<Database>) {
    this.#db = db
  }

  async findLapsed(at: Date, limit: number): Promise<LapsedActivation[]> {
    // The partial index on expires_at (2026-11-23-60) reads the oldest lapsed rows first.
    const rows = await this.#db
      .selectFrom('activations')
      .select(['id', 'license_id'])
      .where('expires_at', '<=', at.toISOString())
      .orderBy('expires_at')
      .limit(limit)
      .execute()
    return rows.map((row) => ({ id: row.id, licenseId: row.license_id }))
  }

  async removeLapsed(licenseId: LicenseId, ids: readonly ActivationId[], at: Date): Promise<Activation[]> {
    if (ids.length === 0) {
      return []
    }
    return writeTransaction(this.#db, async (trx) => {
      await lockLicense(trx, licenseId) // the license row before its activations, as everywhere
      return removeLapsedActivations(trx, licenseId, at.toISOString(), { ids })
    })
  }
}
