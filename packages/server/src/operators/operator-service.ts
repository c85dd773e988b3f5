import { createHash, randomBytes } from 'node:crypto'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import type { AudienceSettings, Session } from '../sessions/session.js'
import { csrfTokenFor, type SessionService, type StartedSession } from '../sessions/session-service.js'
import { SignInLimits } from '../sessions/sign-in-limits.js'
import type { Operator, OperatorRole, OperatorTokenPurpose } from './operator.js'
import type { OperatorStore, StoredOperator } from './operator-store.js'
import { hashPassword, passwordProblem, verifyPassword } from './passwords.js'
import type { SecondFactorStep } from './totp.js'

/** What decides, after a correct password, whether a second step comes first (operators/totp.ts). */
export interface SecondFactorGate {
  afterPassword(operator: Operator): Promise<SecondFactorStep | undefined>
}

const hour = 60 * 60_000

/** How long each kind of one-time link works. */
export const tokenLifetimesMs: Readonly<Record<OperatorTokenPurpose, number>> = {
  setup: 24 * hour,
  invitation: 7 * 24 * hour,
  reset: hour,
}

const maxTokenLength = 100

/** One-time link secrets are 32 random bytes: a plain SHA-256 digest is enough to store them. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

function publicOperator(stored: StoredOperator): Operator {
  return {
    id: stored.id,
    email: stored.email,
    name: stored.name,
    role: stored.role,
    status: stored.status,
    createdAt: stored.createdAt,
    updatedAt: stored.updatedAt,
  }
}

export type OperatorSignIn =
  | { readonly kind: 'signedIn'; readonly operator: Operator; readonly started: StartedSession }
  /** Unknown address, wrong password, not active: one answer for all, so it tells nothing. */
  | { readonly kind: 'refused' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }
  /** The password was right; a second factor (or its enrolment) comes before any session. */
  | SecondFactorStep

function checkPassword(password: string): void {
  const problem = passwordProblem(password)
  if (problem !== undefined) {
    throw new InvalidInputError('/password', problem)
  }
}

/**
 * Operator accounts: the people who sign in to the dashboard. Passwords are Argon2id hashes; the
 * one-time links (first owner's setup, invitations, password resets) are stored as digests and work
 * once. Sign-in limits are checked before any password is hashed.
 */
export class OperatorService {
  readonly #store: OperatorStore
  readonly #sessions: SessionService
  readonly #clock: Clock
  readonly #limits: SignInLimits
  readonly #secondFactor: SecondFactorGate | undefined

  constructor(options: {
    store: OperatorStore
    sessions: SessionService
    clock: Clock
    limits?: SignInLimits
    secondFactor?: SecondFactorGate
  }) {
    this.#secondFactor = options.secondFactor
    this.#store = options.store
    this.#sessions = options.sessions
    this.#clock = options.clock
    this.#limits = options.limits ?? new SignInLimits(options.clock)
  }

  /**
   * At start-up: while no operator exists, a fresh setup link (earlier ones stop working); its
   * secret is returned once, to be printed. Undefined once an operator exists.
   */
  async setupTokenIfNoOperators(): Promise<string | undefined> {
    if ((await this.#store.count()) > 0) {
      return undefined
    }
    await this.#store.deleteTokens('setup', undefined)
    return this.#newToken('setup', undefined)
  }

  /** Uses the setup link: creates the first owner, with a password, and ends every other setup link. */
  async completeSetup(
    token: string,
    input: { email: string; name: string; password: string },
  ): Promise<Operator> {
    checkPassword(input.password)
    await this.#takeToken(token, 'setup')
    await this.#store.deleteTokens('setup', undefined)
    if ((await this.#store.count()) > 0) {
      throw new DomainError('forbidden', 'The server already has operators: the setup link no longer works.')
    }
    return this.#insert({ ...input, role: 'owner', passwordHash: await hashPassword(input.password) })
  }

  /**
   * A new operator: with a password (the command line), active at once; without one, invited: the
   * returned one-time link lets them choose a password.
   */
  async create(input: {
    email: string
    name: string
    role: OperatorRole
    password?: string
  }): Promise<{ readonly operator: Operator; readonly invitationToken: string | undefined }> {
    if (input.password !== undefined) {
      checkPassword(input.password)
      const operator = await this.#insert({ ...input, passwordHash: await hashPassword(input.password) })
      return { operator, invitationToken: undefined }
    }
    const operator = await this.#insert({ ...input, passwordHash: undefined })
    return { operator, invitationToken: await this.#newToken('invitation', operator.id) }
  }

  /** Uses an invitation link: the operator chooses a password and becomes active. */
  async acceptInvitation(token: string, password: string): Promise<Operator> {
    checkPassword(password)
    const operatorId = await this.#takeToken(token, 'invitation')
    const operator = await this.#store.findById(operatorId)
    if (operator === undefined || operator.status !== 'invited') {
      throw new DomainError('unauthenticated', 'This link is unknown, used or expired.')
    }
    await this.#store.update(operator.id, {
      status: 'active',
      passwordHash: await hashPassword(password),
      updatedAt: this.#clock.now(),
    })
    return this.#get(operator.id)
  }

  /**
   * A password-reset link for an active operator, or undefined for any other address (the caller
   * answers the same either way). Earlier reset links of the operator stop working.
   */
  async requestPasswordReset(email: string): Promise<{ operator: Operator; token: string } | undefined> {
    const operator = await this.#store.findByEmail(email.trim())
    if (operator === undefined || operator.status !== 'active') {
      return undefined
    }
    await this.#store.deleteTokens('reset', operator.id)
    return { operator: publicOperator(operator), token: await this.#newToken('reset', operator.id) }
  }

  /**
   * A password-reset link for an operator an owner names (a forgotten password): the operator must
   * be active (409-like refusal otherwise, as `forbidden`). Earlier reset links stop working.
   */
  async passwordResetFor(operatorId: string): Promise<string> {
    const operator = await this.#get(operatorId)
    if (operator.status !== 'active') {
      throw new DomainError(
        'forbidden',
        'Only an active operator gets a reset link: an invited one uses its invitation, a disabled one is enabled first.',
      )
    }
    const reset = await this.requestPasswordReset(operator.email)
    if (reset === undefined) {
      throw new DomainError('operator_not_found', `No operator ${operatorId} exists.`)
    }
    return reset.token
  }

  /** Uses a reset link: a new password, and every session of the operator ends. */
  async resetPassword(token: string, password: string): Promise<Operator> {
    checkPassword(password)
    const operatorId = await this.#takeToken(token, 'reset')
    const operator = await this.#store.findById(operatorId)
    if (operator === undefined || operator.status !== 'active') {
      throw new DomainError('unauthenticated', 'This link is unknown, used or expired.')
    }
    await this.#store.update(operator.id, {
      passwordHash: await hashPassword(password),
      updatedAt: this.#clock.now(),
    })
    await this.#sessions.revokeAllOf('operator', operator.id)
    return this.#get(operator.id)
  }

  /** Password sign-in. The limits come first: a locked account or address costs no hashing. */
  async signIn(email: string, password: string, ip: string): Promise<OperatorSignIn> {
    const address = email.trim()
    const gate = this.#limits.check(address, ip)
    if (!gate.allowed) {
      return { kind: 'rate_limited', retryAfterMs: gate.retryAfterMs }
    }
    const operator = password.length > 1024 ? undefined : await this.#store.findByEmail(address)
    const matches = await verifyPassword(operator?.passwordHash, password.slice(0, 1024))
    if (!matches || operator === undefined || operator.status !== 'active') {
      this.#limits.recordFailure(address, ip)
      return { kind: 'refused' }
    }
    this.#limits.recordSuccess(address)
    const secondStep = await this.#secondFactor?.afterPassword(publicOperator(operator))
    if (secondStep !== undefined) {
      return secondStep
    }
    return {
      kind: 'signedIn',
      operator: publicOperator(operator),
      started: await this.#sessions.start('operator', operator.id),
    }
  }

  /** The operator a session cookie names, if the session is live and the operator active. */
  async authenticate(
    token: string | undefined,
  ): Promise<{ operator: Operator; session: Session } | undefined> {
    const session = await this.#sessions.authenticate('operator', token)
    if (session === undefined) {
      return undefined
    }
    const operator = await this.#store.findById(session.subjectId)
    if (operator === undefined || operator.status !== 'active') {
      return undefined
    }
    return { operator: publicOperator(operator), session }
  }

  /** The operator audience's cookie name, path and lifetimes. */
  sessionSettings(): AudienceSettings {
    return this.#sessions.settings('operator')
  }

  /** The CSRF token of the session `token` names (authenticate it first): for the dashboard after a reload. */
  csrfTokenOf(token: string): string {
    return csrfTokenFor(token)
  }

  csrfMatches(token: string, csrfToken: string | undefined): Promise<boolean> {
    return this.#sessions.csrfMatches(token, csrfToken)
  }

  /** The live sessions of an operator (signed-in browsers), newest first as the store lists them. */
  async sessionsOf(operatorId: string): Promise<readonly Session[]> {
    await this.#get(operatorId)
    return this.#sessions.listOf('operator', operatorId)
  }

  /** Ends one session of the operator; `operator_session_not_found` if it has no such live session. */
  async revokeSession(operatorId: string, sessionId: string): Promise<void> {
    const sessions = await this.sessionsOf(operatorId)
    if (!sessions.some((session) => session.id === sessionId)) {
      throw new DomainError(
        'operator_session_not_found',
        `Operator ${operatorId} has no live session ${sessionId}.`,
      )
    }
    await this.#sessions.revoke('operator', sessionId)
  }

  /** Ends every session of the operator: signed out everywhere. */
  async revokeAllSessions(operatorId: string): Promise<void> {
    await this.#get(operatorId)
    await this.#sessions.revokeAllOf('operator', operatorId)
  }

  async signOut(sessionId: string): Promise<void> {
    await this.#sessions.revoke('operator', sessionId)
  }

  async list(): Promise<readonly Operator[]> {
    return (await this.#store.list()).map(publicOperator)
  }

  /** Changes a role or disables an operator; the last active owner can be neither demoted nor disabled. */
  async update(
    id: string,
    changes: { role?: OperatorRole; status?: 'active' | 'disabled' },
  ): Promise<Operator> {
    const operator = await this.#get(id)
    const losesOwner =
      operator.role === 'owner' &&
      operator.status === 'active' &&
      ((changes.role !== undefined && changes.role !== 'owner') || changes.status === 'disabled')
    if (losesOwner) {
      const owners = (await this.#store.list()).filter((o) => o.role === 'owner' && o.status === 'active')
      if (owners.length <= 1) {
        throw new DomainError(
          'forbidden',
          'This is the last active owner: make another operator owner first.',
        )
      }
    }
    await this.#store.update(id, { ...changes, updatedAt: this.#clock.now() })
    if (changes.status === 'disabled' || (changes.role !== undefined && changes.role !== operator.role)) {
      await this.#sessions.revokeAllOf('operator', id)
    }
    return this.#get(id)
  }

  get(id: string): Promise<Operator> {
    return this.#get(id)
  }

  async #get(id: string): Promise<Operator> {
    const operator = await this.#store.findById(id)
    if (operator === undefined) {
      throw new DomainError('operator_not_found', `No operator ${id} exists.`)
    }
    return publicOperator(operator)
  }

  async #insert(input: {
    email: string
    name: string
    role: OperatorRole
    passwordHash: string | undefined
  }): Promise<Operator> {
    const email = input.email.trim()
    if ((await this.#store.findByEmail(email)) !== undefined) {
      throw new DomainError('operator_email_taken', 'Another operator has this email.')
    }
    const now = this.#clock.now()
    const operator: StoredOperator = {
      id: newId('operator', now.getTime()),
      email,
      name: input.name.trim(),
      role: input.role,
      status: input.passwordHash === undefined ? 'invited' : 'active',
      passwordHash: input.passwordHash,
      createdAt: now,
      updatedAt: now,
    }
    await this.#store.insert(operator)
    return publicOperator(operator)
  }

  async #newToken(purpose: OperatorTokenPurpose, operatorId: string | undefined): Promise<string> {
    const token = randomBytes(32).toString('base64url')
    const now = this.#clock.now()
    await this.#store.insertToken({
      id: newId('operatorToken', now.getTime()),
      tokenDigest: digest(token),
      purpose,
      operatorId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + tokenLifetimesMs[purpose]),
    })
    return token
  }

  /** Consumes a one-time link of `purpose`; returns the operator id it acts for ('' for setup). */
  async #takeToken(token: string, purpose: OperatorTokenPurpose): Promise<string> {
    const taken =
      token.length === 0 || token.length > maxTokenLength
        ? undefined
        : await this.#store.takeToken(digest(token))
    if (
      taken === undefined ||
      taken.purpose !== purpose ||
      taken.expiresAt.getTime() <= this.#clock.now().getTime()
    ) {
      throw new DomainError('unauthenticated', 'This link is unknown, used or expired.')
    }
    return taken.operatorId ?? ''
  }
}
