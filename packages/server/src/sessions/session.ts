/**
 * Who a session belongs to. Operators sign in to the dashboard, customers to the customer portal;
 * each audience has its own cookie name and path, and a session of one is never accepted for the other.
 */
export type SessionAudience = 'operator' | 'customer'

export interface Session {
  readonly id: string
  readonly audience: SessionAudience
  readonly subjectId: string
  readonly createdAt: Date
  readonly lastSeenAt: Date
  /** The session ends at this time unless a request comes first (each request moves it on). */
  readonly idleExpiresAt: Date
  /** The session ends at this time whatever happens. */
  readonly expiresAt: Date
}

export interface AudienceSettings {
  /** The cookie holding the session value. */
  readonly cookieName: string
  /** The cookie's path: the browser sends it only under this path. */
  readonly cookiePath: string
  readonly idleTimeoutMs: number
  readonly absoluteTimeoutMs: number
}

/** The header a browser client sends the CSRF token in on every write. */
export const csrfHeader = 'x-keyturn-csrf'

export const audienceDefaults: Readonly<Record<SessionAudience, AudienceSettings>> = {
  operator: {
    cookieName: 'keyturn_operator_session',
    cookiePath: '/',
    idleTimeoutMs: 30 * 60_000,
    absoluteTimeoutMs: 12 * 60 * 60_000,
  },
  customer: {
    cookieName: 'keyturn_portal_session',
    cookiePath: '/portal',
    idleTimeoutMs: 30 * 60_000,
    absoluteTimeoutMs: 24 * 60 * 60_000,
  },
}
