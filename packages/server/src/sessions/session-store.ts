import type { Session, SessionAudience } from './session.js'

export interface StoredSession extends Session {
  readonly tokenDigest: string
  readonly csrfDigest: string
}

/** Where sessions live: shared by every Keyturn process on the database. */
export interface SessionStore {
  insert(session: StoredSession): Promise<void>
  findByTokenDigest(tokenDigest: string): Promise<StoredSession | undefined>
  /** Moves the idle expiry on after a request. */
  touch(id: string, lastSeenAt: Date, idleExpiresAt: Date): Promise<void>
  /** Deletes one session; false if it was not there. */
  delete(audience: SessionAudience, id: string): Promise<boolean>
  /** Deletes every session of a subject, optionally keeping one (the caller's own). Returns how many. */
  deleteAllOf(audience: SessionAudience, subjectId: string, exceptId?: string): Promise<number>
  listOf(audience: SessionAudience, subjectId: string, now: Date): Promise<readonly StoredSession[]>
  /** Deletes sessions whose idle or absolute expiry passed by `now`. Returns how many. */
  deleteExpired(now: Date): Promise<number>
}
