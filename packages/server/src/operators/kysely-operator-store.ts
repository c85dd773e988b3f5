import type { Kysely, Selectable } from 'kysely'
import type { Database, Timestamp } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import type { OperatorRole, OperatorStatus, OperatorTokenPurpose } from './operator.js'
import type { OperatorStore, StoredOperator, StoredOperatorToken } from './operator-store.js'

/** The tables of migration 2026-11-29-31-operators. */
export interface OperatorsTable {
  id: string
  email: string
  email_lookup: string
  name: string
  role: OperatorRole
  status: OperatorStatus
  password_hash: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface OperatorTokensTable {
  id: string
  token_digest: string
  purpose: OperatorTokenPurpose
  operator_id: string | null
  created_at: Timestamp
  expires_at: Timestamp
}

type Tables = { operators: OperatorsTable; operator_tokens: OperatorTokensTable }

function rowToOperator(row: Selectable<OperatorsTable>): StoredOperator {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    status: row.status,
    passwordHash: row.password_hash ?? undefined,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

export class KyselyOperatorStore implements OperatorStore {
  readonly #db: Kysely<Database & Tables>

  constructor(db: Kysely<Database>) {
    this.#db = db.withTables<Tables>()
  }

  async count(): Promise<number> {
    const row = await this.#db
      .selectFrom('operators')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async insert(operator: StoredOperator): Promise<void> {
    await this.#db
      .insertInto('operators')
      .values({
        id: operator.id,
        email: operator.email,
        email_lookup: operator.email.toLowerCase(),
        name: operator.name,
        role: operator.role,
        status: operator.status,
        password_hash: operator.passwordHash ?? null,
        created_at: operator.createdAt.toISOString(),
        updated_at: operator.updatedAt.toISOString(),
      })
      .execute()
  }

  async findById(id: string): Promise<StoredOperator | undefined> {
    const row = await this.#db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : rowToOperator(row)
  }

  async findByEmail(email: string): Promise<StoredOperator | undefined> {
    const row = await this.#db
      .selectFrom('operators')
      .selectAll()
      .where('email_lookup', '=', email.toLowerCase())
      .executeTakeFirst()
    return row === undefined ? undefined : rowToOperator(row)
  }

  async list(): Promise<readonly StoredOperator[]> {
    const rows = await this.#db
      .selectFrom('operators')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute()
    return rows.map(rowToOperator)
  }

  async update(
    id: string,
    changes: {
      readonly role?: OperatorRole
      readonly status?: OperatorStatus
      readonly name?: string
      readonly passwordHash?: string
      readonly updatedAt: Date
    },
  ): Promise<void> {
    await this.#db
      .updateTable('operators')
      .set({
        ...(changes.role === undefined ? {} : { role: changes.role }),
        ...(changes.status === undefined ? {} : { status: changes.status }),
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.passwordHash === undefined ? {} : { password_hash: changes.passwordHash }),
        updated_at: changes.updatedAt.toISOString(),
      })
      .where('id', '=', id)
      .execute()
  }

  async insertToken(token: StoredOperatorToken): Promise<void> {
    await this.#db
      .insertInto('operator_tokens')
      .values({
        id: token.id,
        token_digest: token.tokenDigest,
        purpose: token.purpose,
        operator_id: token.operatorId ?? null,
        created_at: token.createdAt.toISOString(),
        expires_at: token.expiresAt.toISOString(),
      })
      .execute()
  }

  async takeToken(tokenDigest: string): Promise<StoredOperatorToken | undefined> {
    const row = await this.#db
      .deleteFrom('operator_tokens')
      .where('token_digest', '=', tokenDigest)
      .returningAll()
      .executeTakeFirst()
    return row === undefined
      ? undefined
      : {
          id: row.id,
          tokenDigest: row.token_digest,
          purpose: row.purpose,
          operatorId: row.operator_id ?? undefined,
          createdAt: toDate(row.created_at),
          expiresAt: toDate(row.expires_at),
        }
  }

  async deleteTokens(purpose: OperatorTokenPurpose, operatorId: string | undefined): Promise<void> {
    await this.#db
      .deleteFrom('operator_tokens')
      .where('purpose', '=', purpose)
      .where((eb) =>
        operatorId === undefined ? eb('operator_id', 'is', null) : eb('operator_id', '=', operatorId),
      )
      .execute()
  }
}
