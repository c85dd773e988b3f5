import type { Kysely, Selectable } from 'kysely'
import type { Database, Timestamp } from '../storage/database.js'
import { toDate } from '../storage/database.js'
import type { SessionAudience } from './session.js'
import type { SessionStore, StoredSession } from './session-store.js'

/** The table of migration 2026-11-29-30-sessions. */
export interface SessionsTable {
  id: string
  token_digest: string
  csrf_digest: string
  audience: SessionAudience
  subject_id: string
  created_at: Timestamp
  last_seen_at: Timestamp
  idle_expires_at: Timestamp
  expires_at: Timestamp
}

type SessionDatabase = Database & { sessions: SessionsTable }

function rowToSession(row: Selectable<SessionsTable>): StoredSession {
  return {
    id: row.id,
    tokenDigest: row.token_digest,
    csrfDigest: row.csrf_digest,
    audience: row.audience,
    subjectId: row.subject_id,
    createdAt: toDate(row.created_at),
    lastSeenAt: toDate(row.last_seen_at),
    idleExpiresAt: toDate(row.idle_expires_at),
    expiresAt: toDate(row.expires_at),
  }
}

export class KyselySessionStore implements SessionStore {
  readonly #db: Kysely<SessionDatabase>

  constructor(db: Kysely<Database>) {
    this.#db = db.withTables<{ sessions: SessionsTable }>()
  }

  async insert(session: StoredSession): Promise<void> {
    await this.#db
      .insertInto('sessions')
      .values({
        id: session.id,
        token_digest: session.tokenDigest,
        csrf_digest: session.csrfDigest,
        audience: session.audience,
        subject_id: session.subjectId,
        created_at: session.createdAt.toISOString(),
        last_seen_at: session.lastSeenAt.toISOString(),
        idle_expires_at: session.idleExpiresAt.toISOString(),
        expires_at: session.expiresAt.toISOString(),
      })
      .execute()
  }

  async findByTokenDigest(tokenDigest: string): Promise<StoredSession | undefined> {
    const row = await this.#db
      .selectFrom('sessions')
      .selectAll()
      .where('token_digest', '=', tokenDigest)
      .executeTakeFirst()
    return row === undefined ? undefined : rowToSession(row)
  }

  async touch(id: string, lastSeenAt: Date, idleExpiresAt: Date): Promise<void> {
    await this.#db
      .updateTable('sessions')
      .set({ last_seen_at: lastSeenAt.toISOString(), idle_expires_at: idleExpiresAt.toISOString() })
      .where('id', '=', id)
      .execute()
  }

  async delete(audience: SessionAudience, id: string): Promise<boolean> {
    const result = await this.#db
      .deleteFrom('sessions')
      .where('audience', '=', audience)
      .where('id', '=', id)
      .executeTakeFirst()
    return result.numDeletedRows > 0n
  }

  async deleteAllOf(audience: SessionAudience, subjectId: string, exceptId?: string): Promise<number> {
    let query = this.#db
      .deleteFrom('sessions')
      .where('audience', '=', audience)
      .where('subject_id', '=', subjectId)
    if (exceptId !== undefined) {
      query = query.where('id', '!=', exceptId)
    }
    const result = await query.executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  async listOf(audience: SessionAudience, subjectId: string, now: Date): Promise<readonly StoredSession[]> {
    const rows = await this.#db
      .selectFrom('sessions')
      .selectAll()
      .where('audience', '=', audience)
      .where('subject_id', '=', subjectId)
      .where('idle_expires_at', '>', now.toISOString())
      .where('expires_at', '>', now.toISOString())
      .orderBy('created_at', 'desc')
      .execute()
    return rows.map(rowToSession)
  }

  async deleteExpired(now: Date): Promise<number> {
    const at = now.toISOString()
    const result = await this.#db
      .deleteFrom('sessions')
      .where((eb) => eb.or([eb('idle_expires_at', '<=', at), eb('expires_at', '<=', at)]))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
