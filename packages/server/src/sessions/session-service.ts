import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import type { AudienceSettings, Session, SessionAudience } from './session.js'
import { audienceDefaults } from './session.js'
import type { SessionStore, StoredSession } from './session-store.js'

/** A new session: `token` goes into the cookie, `csrfToken` to the page; both are shown only now. */
export interface StartedSession {
  readonly session: Session
  readonly token: string
  readonly csrfToken: string
}

/** Cookie values and CSRF tokens are 32 random bytes: a plain SHA-256 digest is enough to store them. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

/**
 * The CSRF token of the session whose cookie value is `token`: a digest of it under its own label.
 * A page of the server's origin can learn it again from its session (the cookie goes with the
 * request; another site's page cannot read the answer), and no one without the cookie can make it.
 */
export function csrfTokenFor(token: string): string {
  return createHash('sha256').update(`keyturn-csrf\n${token}`).digest('base64url')
}

function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

function publicSession(stored: StoredSession): Session {
  return {
    id: stored.id,
    audience: stored.audience,
    subjectId: stored.subjectId,
    createdAt: stored.createdAt,
    lastSeenAt: stored.lastSeenAt,
    idleExpiresAt: stored.idleExpiresAt,
    expiresAt: stored.expiresAt,
  }
}

const maxTokenLength = 100

/**
 * Cookie sessions for one or more audiences. The store keeps digests only; a session ends at its
 * idle expiry (moved on by each request) or its absolute expiry, whichever comes first, or when revoked.
 */
export class SessionService {
  readonly #store: SessionStore
  readonly #clock: Clock
  readonly #settings: Readonly<Record<SessionAudience, AudienceSettings>>

  constructor(options: {
    store: SessionStore
    clock: Clock
    settings?: Partial<Record<SessionAudience, Partial<AudienceSettings>>>
  }) {
    this.#store = options.store
    this.#clock = options.clock
    this.#settings = {
      operator: { ...audienceDefaults.operator, ...options.settings?.operator },
      customer: { ...audienceDefaults.customer, ...options.settings?.customer },
    }
  }

  settings(audience: SessionAudience): AudienceSettings {
    return this.#settings[audience]
  }

  async start(audience: SessionAudience, subjectId: string): Promise<StartedSession> {
    const now = this.#clock.now()
    const settings = this.#settings[audience]
    const token = newSecret()
    const csrfToken = csrfTokenFor(token)
    const stored: StoredSession = {
      id: randomUUID(),
      tokenDigest: digest(token),
      csrfDigest: digest(csrfToken),
      audience,
      subjectId,
      createdAt: now,
      lastSeenAt: now,
      idleExpiresAt: new Date(now.getTime() + Math.min(settings.idleTimeoutMs, settings.absoluteTimeoutMs)),
      expiresAt: new Date(now.getTime() + settings.absoluteTimeoutMs),
    }
    await this.#store.insert(stored)
    return { session: publicSession(stored), token, csrfToken }
  }

  /**
   * The live session of `audience` the cookie value names, its idle expiry moved on; undefined when
   * there is none (unknown, expired, revoked, or another audience's).
   */
  async authenticate(audience: SessionAudience, token: string | undefined): Promise<Session | undefined> {
    if (token === undefined || token.length === 0 || token.length > maxTokenLength) {
      return undefined
    }
    const stored = await this.#store.findByTokenDigest(digest(token))
    if (stored === undefined || stored.audience !== audience) {
      return undefined
    }
    const now = this.#clock.now()
    if (stored.idleExpiresAt.getTime() <= now.getTime() || stored.expiresAt.getTime() <= now.getTime()) {
      await this.#store.delete(audience, stored.id)
      return undefined
    }
    const settings = this.#settings[audience]
    const idleExpiresAt = new Date(
      Math.min(now.getTime() + settings.idleTimeoutMs, stored.expiresAt.getTime()),
    )
    await this.#store.touch(stored.id, now, idleExpiresAt)
    return publicSession({ ...stored, lastSeenAt: now, idleExpiresAt })
  }

  /**
   * Whether `csrfToken` (the header of a write) is the session's own: a synchroniser token, compared
   * in constant time. The session must come from `authenticate` of the same cookie.
   */
  async csrfMatches(token: string, csrfToken: string | undefined): Promise<boolean> {
    if (csrfToken === undefined || csrfToken.length === 0 || csrfToken.length > maxTokenLength) {
      return false
    }
    if (token.length === 0 || token.length > maxTokenLength) {
      return false
    }
    const stored = await this.#store.findByTokenDigest(digest(token))
    if (stored === undefined) {
      return false
    }
    const expected = Buffer.from(stored.csrfDigest, 'hex')
    const given = Buffer.from(digest(csrfToken), 'hex')
    return expected.length === given.length && timingSafeEqual(expected, given)
  }

  /** Ends one session of the audience; false if there was none. */
  revoke(audience: SessionAudience, id: string): Promise<boolean> {
    return this.#store.delete(audience, id)
  }

  /** Ends every session of a subject (after a password change, a role change, a removal), optionally but one. */
  revokeAllOf(audience: SessionAudience, subjectId: string, exceptId?: string): Promise<number> {
    return this.#store.deleteAllOf(audience, subjectId, exceptId)
  }

  async listOf(audience: SessionAudience, subjectId: string): Promise<readonly Session[]> {
    return (await this.#store.listOf(audience, subjectId, this.#clock.now())).map(publicSession)
  }

  deleteExpired(): Promise<number> {
    return this.#store.deleteExpired(this.#clock.now())
  }
}
