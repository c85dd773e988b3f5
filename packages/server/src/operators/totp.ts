import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import QRCode from 'qrcode'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { decryptText, digestSecret, encryptText } from '../core/secrets.js'
import type { SessionService, StartedSession } from '../sessions/session-service.js'
import { SignInLimits } from '../sessions/sign-in-limits.js'
import type { FactorStore, PendingStage, StoredTotp } from './factor-store.js'
import type { Operator } from './operator.js'
import { operatorActor, toOperatorResource } from './operator-resource.js'
import {
  type OperatorEventLog,
  type OperatorStore,
  publicOperator,
  type StoredOperator,
} from './operator-store.js'

/** RFC 6238 with the parameters every authenticator app supports: SHA-1, 6 digits, 30 seconds. */
const period = 30
const digits = 6
/** A code of the step before or after the current one is accepted too (clock drift). */
const window = 1
const recoveryCodeCount = 10
/** Crockford's base32 in lower case: no i, l, o or u to misread. */
const recoveryAlphabet = '0123456789abcdefghjkmnpqrstvwxyz'
const recoveryCodeLength = 10
/** How long the pending sign-in between the password and the second factor lasts. */
export const pendingSignInMs = 5 * 60_000
const requireSetting = 'require_two_factor'
const maxTokenLength = 100
const maxCodeLength = 32

/** The second step a password sign-in still needs: a code, or (when required) an enrolment. */
export interface SecondFactorStep {
  readonly kind: 'secondFactor'
  readonly stage: PendingStage
  /** Names the pending sign-in; shown once, stored as a digest; it opens no session by itself. */
  readonly pendingToken: string
  readonly expiresAt: Date
}

/** What an operator answers a second step with: a TOTP code or one of the recovery codes. */
export interface FactorProof {
  readonly code?: string | undefined
  readonly recoveryCode?: string | undefined
}

export type SecondStepOutcome =
  | { readonly kind: 'signedIn'; readonly operator: Operator; readonly started: StartedSession }
  | { readonly kind: 'refused' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }

export interface Enrolment {
  /** Base32, for typing into an authenticator by hand. */
  readonly secret: string
  /** The otpauth:// URI the QR code carries. */
  readonly uri: string
  /** The QR code as an SVG data URL. */
  readonly qrCode: string
}

export interface TwoFactorStatus {
  readonly totp: boolean
  readonly recoveryCodesLeft: number
  /** Whether the server requires a second factor of every operator who signs in with a password. */
  readonly required: boolean
}

/** Pending-sign-in tokens are 32 random bytes: a plain SHA-256 digest is enough to store them. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

function newRecoveryCode(): string {
  const bytes = randomBytes(recoveryCodeLength)
  let code = ''
  for (const byte of bytes) {
    code += recoveryAlphabet[byte & 31]
  }
  return `${code.slice(0, 5)}-${code.slice(5)}`
}

/** Case, dashes and spaces do not matter; o reads as 0 and i or l as 1, as in Crockford's base32. */
function normaliseRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1')
}

function refusedCode(): DomainError {
  return new DomainError('unauthenticated', 'The code is wrong, expired or already used.')
}

/**
 * Operators' second factor: TOTP (RFC 6238) with one-use recovery codes. The seed is stored
 * encrypted, each accepted code's time step is recorded so a code is never accepted twice, and
 * wrong codes count towards a time-bounded lockout per operator and per address, as passwords do.
 * After a correct password, an operator with a confirmed seed (or without one while the server
 * requires two factors) gets a pending sign-in instead of a session: it is not a session, and no
 * route but the second step's accepts it.
 */
export class TwoFactorService {
  readonly #store: FactorStore
  readonly #operators: OperatorStore
  readonly #sessions: SessionService
  readonly #clock: Clock
  readonly #encryptionKey: Buffer
  readonly #recoveryDigestKey: Buffer
  readonly #limits: SignInLimits
  readonly #issuer: string
  readonly #events: OperatorEventLog

  constructor(options: {
    store: FactorStore
    operators: OperatorStore
    /** Where enabling, disabling and new recovery codes are recorded. */
    events: OperatorEventLog
    sessions: SessionService
    clock: Clock
    encryptionKey: Buffer
    recoveryDigestKey: Buffer
    limits?: SignInLimits
    /** The name authenticator apps show beside the account. */
    issuer?: string
  }) {
    this.#store = options.store
    this.#operators = options.operators
    this.#sessions = options.sessions
    this.#clock = options.clock
    this.#encryptionKey = options.encryptionKey
    this.#recoveryDigestKey = options.recoveryDigestKey
    this.#limits = options.limits ?? new SignInLimits(options.clock)
    this.#issuer = options.issuer ?? 'Keyturn'
    this.#events = options.events
  }

  /** An event about `operatorId`'s factors, by `by` (the operator itself unless an owner acted). */
  async #record(
    operatorId: string,
    type:
      | 'operator.two_factor_enabled'
      | 'operator.two_factor_disabled'
      | 'operator.recovery_codes_regenerated',
    by?: Operator,
    extra: object = {},
  ): Promise<void> {
    const operator = await this.#operators.findById(operatorId)
    if (operator === undefined) {
      return
    }
    const resource = toOperatorResource(publicOperator(operator))
    await this.#events.recordAlone(operatorActor(by ?? operator), type, null, { ...resource, ...extra })
  }

  /**
   * After a correct password: the second step the operator still needs, or undefined when the
   * password is enough (no confirmed seed, and the server does not require one).
   */
  async afterPassword(operator: Operator): Promise<SecondFactorStep | undefined> {
    const totp = await this.#store.findTotp(operator.id)
    if (totp?.confirmedAt !== undefined) {
      return this.#pending(operator.id, 'totp')
    }
    if (await this.isRequired()) {
      return this.#pending(operator.id, 'enrol')
    }
    return undefined
  }

  /** The operator a live pending sign-in of `stage` names, or undefined. */
  async pendingOperator(pendingToken: string, stage: PendingStage): Promise<StoredOperator | undefined> {
    const pending = await this.#findPending(pendingToken)
    if (pending === undefined || pending.stage !== stage) {
      return undefined
    }
    const operator = await this.#operators.findById(pending.operatorId)
    return operator?.status === 'active' ? operator : undefined
  }

  /** The second step of a sign-in: a TOTP code or a recovery code turns the pending sign-in into a session. */
  async completeSignIn(pendingToken: string, proof: FactorProof, ip: string): Promise<SecondStepOutcome> {
    const pending = await this.#findPending(pendingToken)
    if (pending === undefined || pending.stage !== 'totp') {
      return { kind: 'refused' }
    }
    const gate = this.#limits.check(pending.operatorId, ip)
    if (!gate.allowed) {
      return { kind: 'rate_limited', retryAfterMs: gate.retryAfterMs }
    }
    const operator = await this.#operators.findById(pending.operatorId)
    if (operator?.status !== 'active' || !(await this.#proofMatches(operator.id, proof))) {
      this.#limits.recordFailure(pending.operatorId, ip)
      return { kind: 'refused' }
    }
    this.#limits.recordSuccess(pending.operatorId)
    await this.#store.deletePending(pending.id)
    return {
      kind: 'signedIn',
      operator: publicOperator(operator),
      started: await this.#sessions.start('operator', operator.id),
    }
  }

  /**
   * Starts (or starts again) an enrolment: a new seed, unconfirmed until `confirmEnrolment`. An
   * operator whose seed is confirmed must disable it first.
   */
  async beginEnrolment(operator: Operator): Promise<Enrolment> {
    const existing = await this.#store.findTotp(operator.id)
    if (existing?.confirmedAt !== undefined) {
      throw new DomainError(
        'two_factor_enrolled',
        'Two-factor authentication is already on: disable it with a code before enrolling again.',
      )
    }
    const secret = new Secret({ size: 20 })
    await this.#store.putTotp({
      operatorId: operator.id,
      secretEncrypted: encryptText(this.#encryptionKey, secret.base32, seedContext(operator.id)),
      confirmedAt: undefined,
      lastUsedStep: undefined,
      createdAt: this.#clock.now(),
    })
    const uri = this.#totp(secret, operator.email).toString()
    const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
    return {
      secret: secret.base32,
      uri,
      qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
    }
  }

  /**
   * Confirms the enrolment with a first code; returns the ten recovery codes, shown only now
   * (earlier ones stop working).
   */
  async confirmEnrolment(operatorId: string, code: string, ip: string): Promise<readonly string[]> {
    this.#gate(operatorId, ip)
    const totp = await this.#store.findTotp(operatorId)
    if (totp === undefined || totp.confirmedAt !== undefined) {
      throw new DomainError('two_factor_not_enrolled', 'No enrolment is waiting for a first code: start one.')
    }
    const step = this.#matchingStep(totp, code)
    if (step === undefined) {
      this.#limits.recordFailure(operatorId, ip)
      throw refusedCode()
    }
    this.#limits.recordSuccess(operatorId)
    const now = this.#clock.now()
    await this.#store.confirmTotp(operatorId, step, now)
    const codes = await this.#newRecoveryCodes(operatorId)
    await this.#record(operatorId, 'operator.two_factor_enabled')
    return codes
  }

  /**
   * The enrolment a pending sign-in was sent to, confirmed: the recovery codes and, at last, a session.
   */
  async confirmPendingEnrolment(
    pendingToken: string,
    code: string,
    ip: string,
  ): Promise<{ recoveryCodes: readonly string[]; operator: Operator; started: StartedSession }> {
    const pending = await this.#findPending(pendingToken)
    const operator = pending === undefined ? undefined : await this.#operators.findById(pending.operatorId)
    if (pending === undefined || pending.stage !== 'enrol' || operator?.status !== 'active') {
      throw new DomainError('unauthenticated', 'This sign-in is unknown or expired: sign in again.')
    }
    const recoveryCodes = await this.confirmEnrolment(operator.id, code, ip)
    await this.#store.deletePending(pending.id)
    return {
      recoveryCodes,
      operator: publicOperator(operator),
      started: await this.#sessions.start('operator', operator.id),
    }
  }

  /** Ten new recovery codes for a code of the authenticator (earlier ones stop working). */
  async regenerateRecoveryCodes(operatorId: string, code: string, ip: string): Promise<readonly string[]> {
    await this.#requireProof(operatorId, { code }, ip)
    const codes = await this.#newRecoveryCodes(operatorId)
    await this.#record(operatorId, 'operator.recovery_codes_regenerated')
    return codes
  }

  /**
   * Turns the second factor off, proven by a code or a recovery code. While the server requires two
   * factors, every session of the operator ends too: the next sign-in goes through enrolment.
   */
  async disable(operatorId: string, proof: FactorProof, ip: string): Promise<void> {
    await this.#requireProof(operatorId, proof, ip)
    await this.#store.deleteFactors(operatorId)
    await this.#record(operatorId, 'operator.two_factor_disabled', undefined, { by: 'self' })
    if (await this.isRequired()) {
      await this.#sessions.revokeAllOf('operator', operatorId)
    }
  }

  /**
   * An owner removes another operator's second factor and recovery codes (a lost authenticator
   * without recovery codes); every session of that operator ends. While two factors are required,
   * the operator enrols again at the next sign-in.
   */
  async resetFor(by: Operator, operatorId: string): Promise<void> {
    if (by.role !== 'owner') {
      throw new DomainError('forbidden', "Only an owner may reset another operator's second factor.")
    }
    if ((await this.#operators.findById(operatorId)) === undefined) {
      throw new DomainError('operator_not_found', `No operator ${operatorId} exists.`)
    }
    await this.#store.deleteFactors(operatorId)
    await this.#record(operatorId, 'operator.two_factor_disabled', by, { by: 'owner' })
    await this.#sessions.revokeAllOf('operator', operatorId)
  }

  async status(operatorId: string): Promise<TwoFactorStatus> {
    const totp = await this.#store.findTotp(operatorId)
    return {
      totp: totp?.confirmedAt !== undefined,
      recoveryCodesLeft: await this.#store.countUnusedRecoveryCodes(operatorId),
      required: await this.isRequired(),
    }
  }

  async isRequired(): Promise<boolean> {
    return (await this.#store.getSetting(requireSetting)) === 'true'
  }

  /**
   * An owner requires (or stops requiring) a second factor of everyone. To require it the owner must
   * have one; every session of an operator without one ends, so each is sent to enrolment next.
   */
  async setRequired(by: Operator, required: boolean): Promise<void> {
    if (by.role !== 'owner') {
      throw new DomainError('forbidden', 'Only an owner may change whether two factors are required.')
    }
    const enrolled = await this.#store.confirmedOperatorIds()
    if (required && !enrolled.has(by.id)) {
      throw new DomainError(
        'two_factor_not_enrolled',
        'Turn on two-factor authentication for yourself before requiring it of everyone.',
      )
    }
    const previous = await this.isRequired()
    if (previous === required) {
      return
    }
    await this.#store.putSetting(requireSetting, String(required), this.#clock.now())
    let sessionsEnded = 0
    if (required) {
      for (const operator of await this.#operators.list()) {
        if (!enrolled.has(operator.id)) {
          const ended = await this.#sessions.revokeAllOf('operator', operator.id)
          sessionsEnded += ended
          if (ended > 0) {
            await this.#events.recordAlone(operatorActor(by), 'operator.session_ended', null, {
              ...toOperatorResource(publicOperator(operator)),
              reason: 'twoFactorRequired',
            })
          }
        }
      }
    }
    await this.#events.recordAlone(operatorActor(by), 'operator_settings.updated', null, {
      requireTwoFactor: required,
      previous: { requireTwoFactor: previous },
      sessionsEnded,
    })
  }

  async #requireProof(operatorId: string, proof: FactorProof, ip: string): Promise<void> {
    this.#gate(operatorId, ip)
    const totp = await this.#store.findTotp(operatorId)
    if (totp?.confirmedAt === undefined) {
      throw new DomainError(
        'two_factor_not_enrolled',
        'Two-factor authentication is not on for this operator.',
      )
    }
    if (!(await this.#proofMatches(operatorId, proof))) {
      this.#limits.recordFailure(operatorId, ip)
      throw refusedCode()
    }
    this.#limits.recordSuccess(operatorId)
  }

  #gate(operatorId: string, ip: string): void {
    const gate = this.#limits.check(operatorId, ip)
    if (!gate.allowed) {
      throw new DomainError('rate_limited', 'Too many wrong codes: wait before trying again.', {
        extensions: { retryAfter: Math.ceil(gate.retryAfterMs / 1000) },
      })
    }
  }

  /** A current TOTP code (each step accepted once) or an unused recovery code (used up now). */
  async #proofMatches(operatorId: string, proof: FactorProof): Promise<boolean> {
    if (proof.code !== undefined) {
      const totp = await this.#store.findTotp(operatorId)
      if (totp?.confirmedAt === undefined) {
        return false
      }
      const step = this.#matchingStep(totp, proof.code)
      return step !== undefined && (await this.#store.useTotpStep(operatorId, step))
    }
    if (proof.recoveryCode !== undefined && proof.recoveryCode.length <= maxCodeLength) {
      const normalised = normaliseRecoveryCode(proof.recoveryCode)
      return (
        normalised.length === recoveryCodeLength &&
        this.#store.useRecoveryCode(
          operatorId,
          digestSecret(this.#recoveryDigestKey, normalised),
          this.#clock.now(),
        )
      )
    }
    return false
  }

  /** The time step `code` belongs to (within the window), or undefined; replays are not checked here. */
  #matchingStep(totp: StoredTotp, code: string): number | undefined {
    const token = code.replace(/\s/g, '')
    if (token.length !== digits || !/^\d+$/.test(token)) {
      return undefined
    }
    const secret = Secret.fromBase32(
      decryptText(this.#encryptionKey, totp.secretEncrypted, seedContext(totp.operatorId)),
    )
    const timestamp = this.#clock.now().getTime()
    const delta = this.#totp(secret, '').validate({ token, timestamp, window })
    if (delta === null) {
      return undefined
    }
    return TOTP.counter({ period, timestamp }) + delta
  }

  #totp(secret: Secret, label: string): TOTP {
    return new TOTP({ issuer: this.#issuer, label, algorithm: 'SHA1', digits, period, secret })
  }

  async #newRecoveryCodes(operatorId: string): Promise<readonly string[]> {
    const codes = Array.from({ length: recoveryCodeCount }, newRecoveryCode)
    await this.#store.replaceRecoveryCodes(
      operatorId,
      codes.map((code) => digestSecret(this.#recoveryDigestKey, normaliseRecoveryCode(code))),
      this.#clock.now(),
    )
    return codes
  }

  async #pending(operatorId: string, stage: PendingStage): Promise<SecondFactorStep> {
    const now = this.#clock.now()
    await this.#store.deleteExpiredPending(now)
    const pendingToken = randomBytes(32).toString('base64url')
    const expiresAt = new Date(now.getTime() + pendingSignInMs)
    await this.#store.insertPending({
      id: randomUUID(),
      tokenDigest: digest(pendingToken),
      operatorId,
      stage,
      createdAt: now,
      expiresAt,
    })
    return { kind: 'secondFactor', stage, pendingToken, expiresAt }
  }

  async #findPending(pendingToken: string) {
    if (pendingToken.length === 0 || pendingToken.length > maxTokenLength) {
      return undefined
    }
    const pending = await this.#store.findPending(digest(pendingToken))
    if (pending === undefined || pending.expiresAt.getTime() <= this.#clock.now().getTime()) {
      return undefined
    }
    return pending
  }
}

/** The encryption's context binds a seed to its operator: a seed copied to another row does not decrypt. */
function seedContext(operatorId: string): string {
  return `operator-totp:${operatorId}`
}
