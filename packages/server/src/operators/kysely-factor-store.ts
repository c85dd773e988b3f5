import type { Kysely } from 'kysely'
import type { Database, Timestamp } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import type {
  FactorStore,
  PendingStage,
  StoredIdentity,
  StoredPendingSignIn,
  StoredTotp,
} from './factor-store.js'

/** The tables of migration 2026-11-30-35-operator-factors. */
interface OperatorTotpTable {
  operator_id: string
  secret_encrypted: string
  confirmed_at: Timestamp | null
  last_used_step: string | number | null
  created_at: Timestamp
}

interface OperatorRecoveryCodesTable {
  id: string
  operator_id: string
  code_digest: string
  used_at: Timestamp | null
  created_at: Timestamp
}

interface OperatorPendingSignInsTable {
  id: string
  token_digest: string
  operator_id: string
  stage: PendingStage
  created_at: Timestamp
  expires_at: Timestamp
}

interface OperatorSettingsTable {
  name: string
  value: string
  updated_at: Timestamp
}

interface OperatorIdentitiesTable {
  id: string
  operator_id: string
  issuer: string
  subject: string
  email: string | null
  created_at: Timestamp
}

type Tables = {
  operator_totp: OperatorTotpTable
  operator_recovery_codes: OperatorRecoveryCodesTable
  operator_pending_sign_ins: OperatorPendingSignInsTable
  operator_settings: OperatorSettingsTable
  operator_identities: OperatorIdentitiesTable
}

export class KyselyFactorStore implements FactorStore {
  readonly #db: Kysely<Database & Tables>

  constructor(db: Kysely<Database>) {
    this.#db = db.withTables<Tables>()
  }

  async findTotp(operatorId: string): Promise<StoredTotp | undefined> {
    const row = await this.#db
      .selectFrom('operator_totp')
      .selectAll()
      .where('operator_id', '=', operatorId)
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : {
          operatorId: row.operator_id,
          secretEncrypted: row.secret_encrypted,
          confirmedAt: row.confirmed_at === null ? undefined : toDate(row.confirmed_at),
          lastUsedStep: row.last_used_step === null ? undefined : Number(row.last_used_step),
          createdAt: toDate(row.created_at),
        }
  }

  async putTotp(totp: StoredTotp): Promise<void> {
    const values = {
      secret_encrypted: totp.secretEncrypted,
      confirmed_at: totp.confirmedAt?.toISOString() ?? null,
      last_used_step: totp.lastUsedStep ?? null,
      created_at: totp.createdAt.toISOString(),
    }
    await this.#db
      .insertInto('operator_totp')
      .values({ operator_id: totp.operatorId, ...values })
      .onConflict((oc) => oc.column('operator_id').doUpdateSet(values))
      .execute()
  }

  async confirmTotp(operatorId: string, step: number, at: Date): Promise<void> {
    await this.#db
      .updateTable('operator_totp')
      .set({ confirmed_at: at.toISOString(), last_used_step: step })
      .where('operator_id', '=', operatorId)
      .execute()
  }

  async useTotpStep(operatorId: string, step: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('operator_totp')
      .set({ last_used_step: step })
      .where('operator_id', '=', operatorId)
      .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  async deleteFactors(operatorId: string): Promise<void> {
    await this.#db.deleteFrom('operator_totp').where('operator_id', '=', operatorId).execute()
    await this.#db.deleteFrom('operator_recovery_codes').where('operator_id', '=', operatorId).execute()
  }

  async confirmedOperatorIds(): Promise<ReadonlySet<string>> {
    const rows = await this.#db
      .selectFrom('operator_totp')
      .select('operator_id')
      .where('confirmed_at', 'is not', null)
      .execute()
    return new Set(rows.map((row) => row.operator_id))
  }

  async replaceRecoveryCodes(operatorId: string, digests: readonly string[], at: Date): Promise<void> {
    await this.#db.deleteFrom('operator_recovery_codes').where('operator_id', '=', operatorId).execute()
    await this.#db
      .insertInto('operator_recovery_codes')
      .values(
        digests.map((digest) => ({
          id: crypto.randomUUID(),
          operator_id: operatorId,
          code_digest: digest,
          used_at: null,
          created_at: at.toISOString(),
        })),
      )
      .execute()
  }

  async useRecoveryCode(operatorId: string, digest: string, at: Date): Promise<boolean> {
    const result = await this.#db
      .updateTable('operator_recovery_codes')
      .set({ used_at: at.toISOString() })
      .where('operator_id', '=', operatorId)
      .where('code_digest', '=', digest)
      .where('used_at', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  async countUnusedRecoveryCodes(operatorId: string): Promise<number> {
    const row = await this.#db
      .selectFrom('operator_recovery_codes')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('operator_id', '=', operatorId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async insertPending(pending: StoredPendingSignIn): Promise<void> {
    await this.#db
      .insertInto('operator_pending_sign_ins')
      .values({
        id: pending.id,
        token_digest: pending.tokenDigest,
        operator_id: pending.operatorId,
        stage: pending.stage,
        created_at: pending.createdAt.toISOString(),
        expires_at: pending.expiresAt.toISOString(),
      })
      .execute()
  }

  async findPending(tokenDigest: string): Promise<StoredPendingSignIn | undefined> {
    const row = await this.#db
      .selectFrom('operator_pending_sign_ins')
      .selectAll()
      .where('token_digest', '=', tokenDigest)
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : {
          id: row.id,
          tokenDigest: row.token_digest,
          operatorId: row.operator_id,
          stage: row.stage,
          createdAt: toDate(row.created_at),
          expiresAt: toDate(row.expires_at),
        }
  }

  async deletePending(id: string): Promise<void> {
    await this.#db.deleteFrom('operator_pending_sign_ins').where('id', '=', id).execute()
  }

  async deleteExpiredPending(now: Date, operatorId?: string): Promise<void> {
    await this.#db
      .deleteFrom('operator_pending_sign_ins')
      .where((eb) =>
        operatorId === undefined
          ? eb('expires_at', '<=', now.toISOString())
          : eb.or([eb('expires_at', '<=', now.toISOString()), eb('operator_id', '=', operatorId)]),
      )
      .execute()
  }

  async getSetting(name: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('operator_settings')
      .select('value')
      .where('name', '=', name)
      .executeTakeFirst()
    return row?.value
  }

  async putSetting(name: string, value: string, at: Date): Promise<void> {
    await this.#db
      .insertInto('operator_settings')
      .values({ name, value, updated_at: at.toISOString() })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: at.toISOString() }))
      .execute()
  }

  async findIdentity(issuer: string, subject: string): Promise<StoredIdentity | undefined> {
    const row = await this.#db
      .selectFrom('operator_identities')
      .selectAll()
      .where('issuer', '=', issuer)
      .where('subject', '=', subject)
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : {
          id: row.id,
          operatorId: row.operator_id,
          issuer: row.issuer,
          subject: row.subject,
          email: row.email ?? undefined,
          createdAt: toDate(row.created_at),
        }
  }

  async insertIdentity(identity: StoredIdentity): Promise<void> {
    await this.#db
      .insertInto('operator_identities')
      .values({
        id: identity.id,
        operator_id: identity.operatorId,
        issuer: identity.issuer,
        subject: identity.subject,
        email: identity.email ?? null,
        created_at: identity.createdAt.toISOString(),
      })
      .execute()
  }
}
