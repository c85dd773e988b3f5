import { createHash, randomBytes } from 'node:crypto'
import type { EventType } from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { type ChangeActor, systemActor, type UnitOfWork } from '../core/unit-of-work.js'
import { dashboardPath } from '../http/dashboard.js'
import type { MailTemplates } from '../mail/mail-templates.js'
import type { AudienceSettings, Session } from '../sessions/session.js'
import { csrfTokenFor, type SessionService, type StartedSession } from '../sessions/session-service.js'
import { SignInLimits } from '../sessions/sign-in-limits.js'
import type { Operator, OperatorRole, OperatorTokenPurpose } from './operator.js'
import { operatorActor, toOperatorResource } from './operator-resource.js'
import {
  type OperatorStore,
  type OperatorStores,
  publicOperator,
  type StoredOperator,
} from './operator-store.js'
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

/** Where the dashboard takes each one-time link (the secret after `#` never reaches a server log). */
export const linkPaths: Readonly<Record<'invitation' | 'reset', string>> = {
  invitation: `${dashboardPath}/invitation`,
  reset: `${dashboardPath}/password-reset`,
}

/** The changes to a one-time link a caller gets back: the link (to copy) and whether it was also mailed. */
export interface IssuedLink {
  readonly token: string
  readonly url: string
  readonly mailed: boolean
}

/** "Forgot password" requests: 3 per address and 30 per IP address in 15 minutes. */
const resetRequestLimits = { accountFailures: 3, ipFailures: 30 }

/** One-time link secrets are 32 random bytes: a plain SHA-256 digest is enough to store them. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

export type OperatorSignIn =
  | { readonly kind: 'signedIn'; readonly operator: Operator; readonly started: StartedSession }
  /** Unknown address, wrong password, not active: one answer for all, so it tells nothing. */
  | { readonly kind: 'refused' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }
  /** The password was right; a second factor (or its enrolment) comes before any session. */
  | SecondFactorStep

/** Operator mails carry no product's branding: the shared variables are the server's. */
const operatorMailVariables = {
  productName: 'Keyturn',
  supportEmail: null,
  supportUrl: null,
  portalUrl: null,
  logoUrl: null,
  accentColor: null,
} as const

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
  readonly #storage: UnitOfWork<OperatorStores>
  readonly #templates: MailTemplates | undefined
  readonly #resetRequests: SignInLimits

  constructor(options: {
    store: OperatorStore
    /** The operators' changes with their events and mails, in one transaction. */
    storage: UnitOfWork<OperatorStores>
    sessions: SessionService
    clock: Clock
    limits?: SignInLimits
    secondFactor?: SecondFactorGate
    /** Set when mail is configured: invitations and reset links are then mailed too. */
    templates?: MailTemplates
  }) {
    this.#secondFactor = options.secondFactor
    this.#storage = options.storage
    this.#templates = options.templates
    this.#resetRequests = new SignInLimits(options.clock, resetRequestLimits)
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
    return this.#newToken(this.#store, 'setup', undefined)
  }

  /** Uses the setup link: creates the first owner, with a password, and ends every other setup link. */
  async completeSetup(
    token: string,
    input: { email: string; name: string; password: string },
    requestId?: string,
  ): Promise<Operator> {
    checkPassword(input.password)
    await this.#takeToken(token, 'setup')
    await this.#store.deleteTokens('setup', undefined)
    if ((await this.#store.count()) > 0) {
      throw new DomainError('forbidden', 'The server already has operators: the setup link no longer works.')
    }
    const passwordHash = await hashPassword(input.password)
    const id = newId('operator', this.#clock.now().getTime())
    return this.#storage.write(
      operatorActor({ id, role: 'owner' }, requestId),
      async ({ operators, events }) => {
        const owner = await this.#insert(operators, { ...input, role: 'owner', passwordHash }, id)
        events.record('operator.created', null, toOperatorResource(owner))
        return owner
      },
    )
  }

  /**
   * A new operator: with a password (the command line), active at once; without one, invited: the
   * returned one-time link lets them choose a password, and when mail is configured it is mailed to
   * them in the same transaction. `linkBase` is the server's public address.
   */
  async create(
    by: ChangeActor,
    input: {
      email: string
      name: string
      role: OperatorRole
      password?: string
    },
    linkBase?: string,
  ): Promise<{ readonly operator: Operator; readonly invitation: IssuedLink | undefined }> {
    if (input.password !== undefined) {
      checkPassword(input.password)
      const passwordHash = await hashPassword(input.password)
      return this.#storage.write(by, async ({ operators, events }) => {
        const operator = await this.#insert(operators, { ...input, passwordHash })
        events.record('operator.created', null, toOperatorResource(operator))
        return { operator, invitation: undefined }
      })
    }
    const invitedBy = await this.#nameOf(by)
    return this.#storage.write(by, async (tx) => {
      const operator = await this.#insert(tx.operators, { ...input, passwordHash: undefined })
      const token = await this.#newToken(tx.operators, 'invitation', operator.id)
      const url = `${linkBase ?? ''}${linkPaths.invitation}#${token}`
      const mailed = await this.#mail(tx, 'operator-invitation', operator.email, {
        invitedBy,
        role: operator.role,
        link: url,
        days: tokenLifetimesMs.invitation / (24 * hour),
      })
      tx.events.record('operator.invited', null, { ...toOperatorResource(operator), mailed })
      return { operator, invitation: { token, url, mailed } }
    })
  }

  /** Uses an invitation link: the operator chooses a password and becomes active. */
  async acceptInvitation(token: string, password: string, requestId?: string): Promise<Operator> {
    checkPassword(password)
    const operatorId = await this.#takeToken(token, 'invitation')
    const operator = await this.#store.findById(operatorId)
    if (operator === undefined || operator.status !== 'invited') {
      throw new DomainError('unauthenticated', 'This link is unknown, used or expired.')
    }
    const passwordHash = await hashPassword(password)
    await this.#storage.write(operatorActor(operator, requestId), async ({ operators, events }) => {
      await operators.update(operator.id, { status: 'active', passwordHash, updatedAt: this.#clock.now() })
      events.record('operator.activated', null, toOperatorResource(await this.#getIn(operators, operator.id)))
    })
    return this.#get(operator.id)
  }

  /**
   * "Forgot password", from the sign-in page: an active operator's address gets a reset link by
   * mail (when mail is configured); any other address gets nothing, and the caller answers the same
   * either way. Both take the same steps (the mail is rendered, one transaction runs) so the time
   * tells little. Limited per address and per IP address, counting every request.
   */
  async requestPasswordReset(
    email: string,
    caller: { readonly ip: string; readonly requestId?: string; readonly linkBase: string },
  ): Promise<
    { readonly kind: 'accepted' } | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }
  > {
    const address = email.trim()
    const gate = this.#resetRequests.check(address, caller.ip)
    if (!gate.allowed) {
      return { kind: 'rate_limited', retryAfterMs: gate.retryAfterMs }
    }
    this.#resetRequests.recordFailure(address, caller.ip)
    const found = await this.#store.findByEmail(address)
    const operator = found?.status === 'active' ? found : undefined
    const by = operator === undefined ? systemActor('keyturn') : operatorActor(operator, caller.requestId)
    await this.#storage.write(by, async (tx) => {
      await this.#issueReset(
        tx,
        operator ?? { id: '', email: address },
        caller.linkBase,
        operator !== undefined,
      )
    })
    return { kind: 'accepted' }
  }

  /**
   * A password-reset link for an operator an owner names (a forgotten password): the operator must
   * be active (refused as `forbidden` otherwise). Earlier reset links stop working. Mailed to the
   * operator too when mail is configured.
   */
  async passwordResetFor(by: ChangeActor, operatorId: string, linkBase: string): Promise<IssuedLink> {
    const operator = await this.#get(operatorId)
    if (operator.status !== 'active') {
      throw new DomainError(
        'forbidden',
        'Only an active operator gets a reset link: an invited one uses its invitation, a disabled one is enabled first.',
      )
    }
    return this.#storage.write(by, (tx) => this.#issueReset(tx, operator, linkBase, true))
  }

  /**
   * Stores a reset link and queues its mail; for an address that is no active operator's (`real`
   * false) the same statements run on nothing and no mail is queued.
   */
  async #issueReset(
    tx: OperatorStores & {
      readonly events: { record(type: EventType, productId: null, data: object): void }
    },
    operator: { readonly id: string; readonly email: string },
    linkBase: string,
    real: boolean,
  ): Promise<IssuedLink> {
    await tx.operators.deleteTokens('reset', operator.id)
    const token = randomBytes(32).toString('base64url')
    const url = `${linkBase}${linkPaths.reset}#${token}`
    const rendered = this.#templates?.render('operator-password-reset', {
      ...operatorMailVariables,
      email: operator.email,
      link: url,
      minutes: tokenLifetimesMs.reset / 60_000,
    })
    if (!real) {
      return { token: '', url: '', mailed: false }
    }
    await this.#storeToken(tx.operators, token, 'reset', operator.id)
    if (rendered !== undefined) {
      await tx.mail.queue(
        { template: 'operator-password-reset', message: { to: operator.email, ...rendered } },
        this.#clock.now(),
      )
    }
    const stored = await this.#getIn(tx.operators, operator.id)
    tx.events.record('operator.password_reset_requested', null, {
      ...toOperatorResource(stored),
      mailed: rendered !== undefined,
    })
    return { token, url, mailed: rendered !== undefined }
  }

  /** Uses a reset link: a new password, and every session of the operator ends. */
  async resetPassword(token: string, password: string, requestId?: string): Promise<Operator> {
    checkPassword(password)
    const operatorId = await this.#takeToken(token, 'reset')
    const operator = await this.#store.findById(operatorId)
    if (operator === undefined || operator.status !== 'active') {
      throw new DomainError('unauthenticated', 'This link is unknown, used or expired.')
    }
    const passwordHash = await hashPassword(password)
    await this.#storage.write(operatorActor(operator, requestId), async ({ operators, events }) => {
      await operators.update(operator.id, { passwordHash, updatedAt: this.#clock.now() })
      events.record('operator.password_changed', null, {
        ...toOperatorResource(await this.#getIn(operators, operator.id)),
        via: 'resetLink',
      })
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
  async revokeSession(by: ChangeActor, operatorId: string, sessionId: string): Promise<void> {
    const sessions = await this.sessionsOf(operatorId)
    if (!sessions.some((session) => session.id === sessionId)) {
      throw new DomainError(
        'operator_session_not_found',
        `Operator ${operatorId} has no live session ${sessionId}.`,
      )
    }
    await this.#sessions.revoke('operator', sessionId)
    await this.#sessionEnded(by, operatorId, 'revoked')
  }

  /** Ends every session of the operator: signed out everywhere. */
  async revokeAllSessions(by: ChangeActor, operatorId: string): Promise<void> {
    await this.#get(operatorId)
    await this.#sessions.revokeAllOf('operator', operatorId)
    await this.#sessionEnded(by, operatorId, 'revokedAll')
  }

  /** The operator signs out of the session it calls with. */
  async signOut(operator: Operator, sessionId: string, requestId?: string): Promise<void> {
    await this.#sessions.revoke('operator', sessionId)
    await this.#sessionEnded(operatorActor(operator, requestId), operator.id, 'signedOut')
  }

  /** `operator.session_ended`: whose, why, and (as the actor) by whom; never the session's id. */
  async #sessionEnded(
    by: ChangeActor,
    operatorId: string,
    reason: 'signedOut' | 'revoked' | 'revokedAll',
  ): Promise<void> {
    const operator = await this.#get(operatorId)
    await this.#storage.recordAlone(by, 'operator.session_ended', null, {
      ...toOperatorResource(operator),
      reason,
    })
  }

  async list(): Promise<readonly Operator[]> {
    return (await this.#store.list()).map(publicOperator)
  }

  /** Changes a role or disables an operator; the last active owner can be neither demoted nor disabled. */
  async update(
    by: ChangeActor,
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
    const roleChanged = changes.role !== undefined && changes.role !== operator.role
    const statusChanged = changes.status !== undefined && changes.status !== operator.status
    await this.#storage.write(by, async ({ operators, events }) => {
      await operators.update(id, { ...changes, updatedAt: this.#clock.now() })
      const after = toOperatorResource(await this.#getIn(operators, id))
      if (roleChanged) {
        events.record('operator.updated', null, { ...after, previous: { role: operator.role } })
      }
      if (statusChanged) {
        events.record(changes.status === 'disabled' ? 'operator.disabled' : 'operator.enabled', null, after)
      }
    })
    if (changes.status === 'disabled' || roleChanged) {
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

  async #getIn(store: OperatorStore, id: string): Promise<Operator> {
    const operator = await store.findById(id)
    if (operator === undefined) {
      throw new DomainError('operator_not_found', `No operator ${id} exists.`)
    }
    return publicOperator(operator)
  }

  /** Who is named as the sender of an invitation: the inviting operator's name, else the server. */
  async #nameOf(by: ChangeActor): Promise<string> {
    const operatorId = 'operator' in by ? by.operator?.id : undefined
    const inviter = operatorId === undefined ? undefined : await this.#store.findById(operatorId)
    return inviter?.name ?? 'The Keyturn server'
  }

  /** Queues a mail to an operator when mail is configured; false when it is not. */
  async #mail(
    tx: OperatorStores,
    template: 'operator-invitation' | 'operator-password-reset',
    to: string,
    variables: Record<string, unknown>,
  ): Promise<boolean> {
    if (this.#templates === undefined) {
      return false
    }
    const rendered = this.#templates.render(template, { ...operatorMailVariables, ...variables })
    await tx.mail.queue({ template, message: { to, ...rendered } }, this.#clock.now())
    return true
  }

  async #insert(
    store: OperatorStore,
    input: {
      email: string
      name: string
      role: OperatorRole
      passwordHash: string | undefined
    },
    id?: string,
  ): Promise<Operator> {
    const email = input.email.trim()
    if ((await store.findByEmail(email)) !== undefined) {
      throw new DomainError('operator_email_taken', 'Another operator has this email.')
    }
    const now = this.#clock.now()
    const operator: StoredOperator = {
      id: id ?? newId('operator', now.getTime()),
      email,
      name: input.name.trim(),
      role: input.role,
      status: input.passwordHash === undefined ? 'invited' : 'active',
      passwordHash: input.passwordHash,
      createdAt: now,
      updatedAt: now,
    }
    await store.insert(operator)
    return publicOperator(operator)
  }

  async #newToken(
    store: OperatorStore,
    purpose: OperatorTokenPurpose,
    operatorId: string | undefined,
  ): Promise<string> {
    const token = randomBytes(32).toString('base64url')
    await this.#storeToken(store, token, purpose, operatorId)
    return token
  }

  async #storeToken(
    store: OperatorStore,
    token: string,
    purpose: OperatorTokenPurpose,
    operatorId: string | undefined,
  ): Promise<void> {
    const now = this.#clock.now()
    await store.insertToken({
      id: newId('operatorToken', now.getTime()),
      tokenDigest: digest(token),
      purpose,
      operatorId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + tokenLifetimesMs[purpose]),
    })
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

export { operatorActor }
