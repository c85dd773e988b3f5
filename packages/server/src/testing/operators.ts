import { systemActor } from '../core/unit-of-work.js'
import type { OperatorRole } from '../operators/operator.js'
import { audienceDefaults, csrfHeader } from '../sessions/session.js'
import type { TestApp } from './build-test-app.js'

/** A password the operator tests share (long enough, not a common one). */
export const testOperatorPassword = 'correct horse battery staple'

export interface SignedInOperator {
  readonly id: string
  /** The id of its session (listed by the session routes; not a secret). */
  readonly sessionId: string
  readonly email: string
  /** The request headers of a read: the session cookie. */
  readonly read: { readonly cookie: string }
  /** The request headers of a write: the session cookie and the CSRF header. */
  readonly write: { readonly cookie: string; readonly [csrfHeader]: string }
}

let made = 0

/**
 * An active operator of `role` with a live session, as the dashboard holds it after signing in
 * (the sign-in itself is tested by the /operator routes' tests: this skips its password hashing).
 */
export async function signedInOperator(test: TestApp, role: OperatorRole): Promise<SignedInOperator> {
  const email = `${role}-${made++}@example.com`
  const { operator } = await test.services.operators.create(systemActor('keyturn'), {
    email,
    name: `The ${role}`,
    role,
    password: testOperatorPassword,
  })
  const started = await test.services.sessions.start('operator', operator.id)
  const cookie = `${audienceDefaults.operator.cookieName}=${started.token}`
  return {
    id: operator.id,
    sessionId: started.session.id,
    email,
    read: { cookie },
    write: { cookie, [csrfHeader]: started.csrfToken },
  }
}
