/**
 * @module The license guard: validates online with signed answers when it can, keeps the last
 * signed answer as proof, and falls back to it (or to a license file) when the server cannot be
 * reached, with the check-in deadline and grace period the proof carries. The states and reasons
 * are defined in ./types.ts; docs/guides/offline.md explains them for users.
 */
import { type Static, Type } from 'typebox'
import { Compile } from 'typebox/compile'
import { canonicalLicenseKey } from '../../../protocol/src/index.js'
import { InvalidOptionError, readClockTolerance } from '../clock.js'
import {
  KeyturnApiError,
  KeyturnConnectionError,
  KeyturnSignatureError,
  LicenseFileError,
} from '../errors.js'
import type { ProofOptions, RequestOptions, ValidationWithProof } from '../keyturn-client.js'
import { readSignedAnswer } from '../signed-answers.js'
import type { PublicKeyInput } from '../validate-license-token.js'
import { verifyLicenseFile } from '../verify-license-file.js'
import type {
  LicenseGuardInvalidReason,
  LicenseGuardResult,
  LicenseGuardStateChange,
  LicenseGuardStorage,
} from './types.js'

/** The grace period after a missed check-in when the proof carries none (seconds): three days. */
export const defaultGuardGracePeriod = 3 * 86_400
/** How far `now()` may be behind the latest signed server time before it is `clock_tampered`. */
export const defaultGuardClockTolerance = 300
/** The longest `gracePeriod` option: ten years. */
export const maxGuardGracePeriod = 3_650 * 86_400

/** What the guard needs of a client (`KeyturnClient` fits). */
export interface LicenseGuardClient {
  validateLicenseWithProof(
    body: { key: string; productId: string; fingerprint?: string },
    options?: RequestOptions & ProofOptions,
  ): Promise<ValidationWithProof>
}

export interface LicenseGuardOptions {
  /** A `KeyturnClient` with a `client` API key of the product. */
  readonly client: LicenseGuardClient
  readonly productId: string
  /** The product's public key(s), PEM or JWK (current and retired): every proof must be signed by one. */
  readonly publicKey: PublicKeyInput | readonly PublicKeyInput[]
  readonly licenseKey: string
  /** Where the last signed answer is kept: `localStorageGuardStorage()`, `fileGuardStorage()` (Node), or your own. */
  readonly storage: LicenseGuardStorage
  /** This machine's fingerprint: validations then require it to be activated. */
  readonly fingerprint?: string
  /** Seconds of grace after a missed check-in when the proof's policy sets none (default three days). */
  readonly gracePeriod?: number
  /** The clock (default: the system clock); must return a valid Date. */
  readonly now?: () => Date
  /** Clock drift accepted, 0 to 3600 seconds (default 300): signed answers and the wound-back check. */
  readonly clockToleranceSeconds?: number
  /** A license file (e.g. from offline activation) to fall back on when it is newer than the stored answer. */
  readonly licenseFile?: string
  /** Called after a check whose state or reason differs from the previous one (and after the first). */
  readonly onChange?: (change: LicenseGuardStateChange) => void
  /** The storage key (default `keyturn-guard:<productId>`). */
  readonly storageKey?: string
}

export interface LicenseGuard {
  /** Validates (online when it can) and answers the state; concurrent calls share one check. */
  check(): Promise<LicenseGuardResult>
  /** The last check's result; `null` before the first. */
  readonly current: LicenseGuardResult | null
}

/** A verified proof: what a signed answer or a license file says, and when the server made it. */
interface Proof {
  /** When the server signed it (ms since the epoch). */
  readonly signedAt: number
  readonly isValid: boolean
  readonly reason: LicenseGuardInvalidReason | null
  readonly license: NonNullable<LicenseGuardResult['license']>
  readonly entitlements: readonly string[]
  readonly checkInBy: number | undefined
  readonly gracePeriod: number | undefined
  /** The proof's own end (a file's expiry), ms; undefined: none. */
  readonly expiresAt: number | undefined
}

/** What a stored record holds: the signed answer as text, and the fingerprint it was asked for. */
const StoredRecordSchema = Type.Object({
  answer: Type.String(),
  fingerprint: Type.Union([Type.String(), Type.Null()]),
})
type StoredRecord = Static<typeof StoredRecordSchema>

/** The parts of a validation answer the guard reads (the answer carries more). */
const GuardedAnswerSchema = Type.Object({
  isValid: Type.Boolean(),
  reason: Type.Union([
    Type.Enum([
      'expired',
      'revoked',
      'suspended',
      'payment_overdue',
      'not_activated',
      'entitlements_missing',
      'usage_exceeded',
    ]),
    Type.Null(),
  ]),
  timestamp: Type.String(),
  license: Type.Object({
    id: Type.String(),
    key: Type.String(),
    status: Type.String(),
    productId: Type.String(),
    expirationDate: Type.Union([Type.String(), Type.Null()]),
    entitlements: Type.Array(Type.String()),
  }),
  checkInBy: Type.Optional(Type.String()),
  gracePeriod: Type.Optional(Type.Integer({ minimum: 0, maximum: maxGuardGracePeriod })),
})

const storedRecordValidator = lazy(() => Compile(StoredRecordSchema))
const answerValidator = lazy(() => Compile(GuardedAnswerSchema))

/**
 * A license guard for one license of one product.
 *
 * @example
 * ```ts
 * const guard = createLicenseGuard({ client, productId, publicKey: PRODUCT_PUBLIC_KEY_PEM, licenseKey, storage: localStorageGuardStorage() })
 * const { state, reason } = await guard.check()
 * ```
 */
export function createLicenseGuard(options: LicenseGuardOptions): LicenseGuard {
  const settings = readOptions(options)
  let current: LicenseGuardResult | null = null
  let inFlight: Promise<LicenseGuardResult> | undefined
  // The latest signed server time seen by this guard (ms); stored proofs raise it too.
  let latestSigned = Number.NEGATIVE_INFINITY

  const now = (): number => {
    const value = settings.now()
    const time = value instanceof Date ? value.getTime() : Number.NaN
    if (!Number.isFinite(time)) {
      throw new InvalidOptionError('now', '`now` must return a valid Date.')
    }
    return time
  }

  const run = async (): Promise<LicenseGuardResult> => {
    const at = now()
    const online = await validateOnline(at)
    const result = online === 'offline' ? await fromProofs(now()) : online
    const previous = current
    current = result
    if (previous === null || previous.state !== result.state || previous.reason !== result.reason) {
      try {
        settings.onChange?.({ previous, current: result })
      } catch {
        // A failing listener must not change what the guard answers.
      }
    }
    return result
  }

  /** The online answer as a result, or `offline` when the guard must fall back on a proof. */
  const validateOnline = async (at: number): Promise<LicenseGuardResult | 'offline'> => {
    const body = {
      key: settings.licenseKey,
      productId: settings.productId,
      ...(settings.fingerprint === undefined ? {} : { fingerprint: settings.fingerprint }),
    }
    let answer: ValidationWithProof
    try {
      answer = await settings.client.validateLicenseWithProof(body, {
        publicKey: settings.publicKey,
        now: () => new Date(now()),
        toleranceSeconds: settings.tolerance,
      })
    } catch (error) {
      return onlineFailure(error, at)
    }
    const proof = await readAnswer(answer.proof)
    if (proof === undefined) {
      return invalid('unexpected_error', null) // a checked answer that does not read back: never trust it
    }
    // Kept whether valid or not: a signed "revoked" must also win offline over an older "valid".
    await keep({ answer: answer.proof, fingerprint: settings.fingerprint ?? null }, proof.isValid)
    latestSigned = Math.max(latestSigned, proof.signedAt)
    if (!proof.isValid) {
      return invalid(proof.reason ?? 'unexpected_error', proof.license)
    }
    const deadline = proof.checkInBy ?? proof.signedAt
    return result('valid', 'online', proof, Math.min(deadline, licenseEnd(proof)))
  }

  const onlineFailure = async (error: unknown, at: number): Promise<LicenseGuardResult | 'offline'> => {
    if (error instanceof KeyturnConnectionError) {
      return 'offline'
    }
    if (error instanceof KeyturnApiError) {
      if (error.status >= 500 || error.status === 429 || error.status === 408) {
        return 'offline'
      }
      if (error.status === 404 && error.code === 'license_not_found') {
        await forget()
        return invalid('license_not_found', null)
      }
      return invalid('request_refused', null)
    }
    if (error instanceof KeyturnSignatureError) {
      // Verified, but signed later than our clock allows: our clock is behind the server's.
      if (error.code === 'stale' && error.signedAt !== undefined) {
        latestSigned = Math.max(latestSigned, error.signedAt.getTime())
        if (error.signedAt.getTime() > at + settings.tolerance * 1000) {
          return invalid('clock_tampered', null)
        }
      }
      // Not our server's answer for this request (a captive portal, a proxy, an attacker): what an
      // attacker gets by answering is what they get by cutting the line, so judge offline.
      return 'offline'
    }
    if (error instanceof InvalidOptionError) {
      throw error
    }
    return invalid('unexpected_error', null)
  }

  const fromProofs = async (at: number): Promise<LicenseGuardResult> => {
    const stored = await readStored()
    const file = await readFile(at)
    const candidates = [stored, file].filter((proof): proof is Proof => typeof proof === 'object')
    const proof = candidates.sort((a, b) => b.signedAt - a.signedAt)[0]
    if (proof === undefined) {
      return invalid(typeof file === 'string' ? file : 'no_proof', null)
    }
    latestSigned = Math.max(latestSigned, proof.signedAt)
    if (latestSigned > at + settings.tolerance * 1000) {
      return invalid('clock_tampered', proof.license)
    }
    if (!proof.isValid) {
      return invalid(proof.reason ?? 'unexpected_error', proof.license)
    }
    const end = licenseEnd(proof)
    if (end <= at) {
      return invalid('expired', proof.license)
    }
    const deadline = proof.checkInBy ?? proof.signedAt
    const graceEnd = deadline + (proof.gracePeriod ?? settings.gracePeriod) * 1000
    if (at < deadline) {
      return result('valid', 'offline', proof, Math.min(deadline, end))
    }
    if (at < graceEnd) {
      return result('grace', 'check_in_overdue', proof, Math.min(graceEnd, end))
    }
    return invalid('grace_expired', proof.license)
  }

  /** The stored answer when it verifies and is for this license, product and machine; else undefined. */
  const readStored = async (): Promise<Proof | undefined> => {
    let text: string | null
    try {
      text = await settings.storage.get(settings.storageKey)
    } catch {
      return undefined
    }
    if (typeof text !== 'string') {
      return undefined
    }
    let record: unknown
    try {
      record = JSON.parse(text)
    } catch {
      return undefined
    }
    if (!storedRecordValidator().Check(record) || record.fingerprint !== (settings.fingerprint ?? null)) {
      return undefined
    }
    return readAnswer(record.answer)
  }

  /** A signed validation answer verified again: undefined for anything that is not one of ours for this license. */
  const readAnswer = async (text: string): Promise<Proof | undefined> => {
    try {
      const { answer, times } = await readSignedAnswer(text, settings.publicKey)
      if (answer.status !== 200 || answer.method !== 'POST' || !answer.path.endsWith('/licenses/validate')) {
        return undefined
      }
      return toProof(answer.json, Math.max(times.created, times.dated) * 1000)
    } catch {
      return undefined
    }
  }

  const toProof = (body: unknown, signedAt: number): Proof | undefined => {
    if (!answerValidator().Check(body)) {
      return undefined
    }
    const { license, reason } = body
    const timestamp = Date.parse(body.timestamp)
    const checkInBy = body.checkInBy === undefined ? undefined : Date.parse(body.checkInBy)
    if (
      license.productId !== settings.productId ||
      !sameKey(license.key, settings.licenseKey) ||
      !Number.isFinite(timestamp) ||
      (checkInBy !== undefined && !Number.isFinite(checkInBy)) ||
      body.isValid !== (reason === null)
    ) {
      return undefined
    }
    return {
      signedAt: Math.max(signedAt, timestamp),
      isValid: body.isValid,
      reason,
      license: { id: license.id, status: license.status, expiresAt: license.expirationDate },
      entitlements: license.entitlements,
      checkInBy,
      gracePeriod: body.gracePeriod,
      expiresAt: undefined,
    }
  }

  /** The `licenseFile` option verified at `at`: a proof, its error code, or undefined without one. */
  const readFile = async (at: number): Promise<Proof | LicenseGuardInvalidReason | undefined> => {
    if (settings.licenseFile === undefined) {
      return undefined
    }
    try {
      const file = await verifyLicenseFile(settings.licenseFile, {
        productId: settings.productId,
        publicKey: settings.publicKey,
        licenseKey: settings.licenseKey,
        ...(settings.fingerprint === undefined ? {} : { fingerprint: settings.fingerprint }),
        now: new Date(at),
        clockToleranceSeconds: settings.tolerance,
      })
      return {
        signedAt: Date.parse(file.issuedAt),
        isValid: file.license.status === 'active',
        reason:
          file.license.status === 'active' ? null : file.license.status === 'revoked' ? 'revoked' : 'expired',
        license: { id: file.licenseId, status: file.license.status, expiresAt: file.license.expirationDate },
        entitlements: file.entitlements,
        checkInBy: file.checkInBy === undefined ? undefined : Date.parse(file.checkInBy),
        gracePeriod: file.gracePeriod,
        expiresAt: file.expiresAt === null ? undefined : Date.parse(file.expiresAt),
      }
    } catch (error) {
      if (error instanceof LicenseFileError) {
        // Issued after our clock: the clock was wound back past the file's making.
        return error.code === 'not_yet_valid' ? 'clock_tampered' : error.code
      }
      throw error
    }
  }

  const keep = async (record: StoredRecord, isValid: boolean): Promise<void> => {
    try {
      await settings.storage.set(settings.storageKey, JSON.stringify(record))
    } catch {
      if (!isValid) {
        // An older "valid" must not outlive a signed "invalid" we could not store.
        await forget()
      }
    }
  }

  const forget = async (): Promise<void> => {
    try {
      await settings.storage.delete(settings.storageKey)
    } catch {
      // Nothing left to do: the answer in hand is invalid either way.
    }
  }

  return {
    check() {
      inFlight ??= run().finally(() => {
        inFlight = undefined
      })
      return inFlight
    },
    get current() {
      return current
    },
  }
}

function result(
  state: 'valid' | 'grace',
  reason: 'online' | 'offline' | 'check_in_overdue',
  proof: Proof,
  validUntil: number,
): LicenseGuardResult {
  return {
    state,
    reason,
    license: proof.license,
    entitlements: [...proof.entitlements],
    validUntil: new Date(validUntil),
  }
}

function invalid(
  reason: LicenseGuardInvalidReason,
  license: LicenseGuardResult['license'],
): LicenseGuardResult {
  return { state: 'invalid', reason, license, entitlements: [], validUntil: null }
}

/** When the license (or the file carrying it) ends, ms; +Infinity for never. */
function licenseEnd(proof: Proof): number {
  const license = proof.license.expiresAt === null ? Number.NaN : Date.parse(proof.license.expiresAt)
  return Math.min(
    Number.isFinite(license) ? license : Number.POSITIVE_INFINITY,
    proof.expiresAt ?? Number.POSITIVE_INFINITY,
  )
}

function sameKey(stored: string, given: string): boolean {
  return stored === given || stored === canonicalLicenseKey(given)
}

function isSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= maxGuardGracePeriod
}

interface Settings {
  readonly client: LicenseGuardClient
  readonly productId: string
  readonly publicKey: PublicKeyInput | readonly PublicKeyInput[]
  readonly licenseKey: string
  readonly storage: LicenseGuardStorage
  readonly fingerprint: string | undefined
  readonly gracePeriod: number
  readonly now: () => Date
  readonly tolerance: number
  readonly licenseFile: string | undefined
  readonly onChange: ((change: LicenseGuardStateChange) => void) | undefined
  readonly storageKey: string
}

/** The options read strictly: anything invalid is an `InvalidOptionError`, never a wider guard. */
function readOptions(options: LicenseGuardOptions): Settings {
  // The I/O boundary: JavaScript callers may pass anything, so every field is checked as unknown.
  const given: Partial<LicenseGuardOptions> = options ?? {}
  const { client, productId, publicKey, licenseKey, storage, fingerprint, gracePeriod } = given
  if (typeof client?.validateLicenseWithProof !== 'function') {
    throw new InvalidOptionError(
      'client',
      '`client` must be a KeyturnClient (with validateLicenseWithProof).',
    )
  }
  if (typeof productId !== 'string' || productId === '') {
    throw new InvalidOptionError('productId', '`productId` must be the product id.')
  }
  if (publicKey === undefined || publicKey === null || (Array.isArray(publicKey) && publicKey.length === 0)) {
    throw new InvalidOptionError(
      'publicKey',
      '`publicKey` must be the product public key, or a non-empty list of them.',
    )
  }
  if (typeof licenseKey !== 'string' || licenseKey === '') {
    throw new InvalidOptionError('licenseKey', '`licenseKey` must be the license key.')
  }
  if (
    typeof storage?.get !== 'function' ||
    typeof storage.set !== 'function' ||
    typeof storage.delete !== 'function'
  ) {
    throw new InvalidOptionError('storage', '`storage` must have get, set and delete.')
  }
  if (fingerprint !== undefined && (typeof fingerprint !== 'string' || fingerprint === '')) {
    throw new InvalidOptionError('fingerprint', '`fingerprint` must be a non-empty string when given.')
  }
  if (gracePeriod !== undefined && !isSeconds(gracePeriod)) {
    throw new InvalidOptionError(
      'gracePeriod',
      `\`gracePeriod\` must be a whole number of seconds from 0 to ${maxGuardGracePeriod}.`,
    )
  }
  if (given.now !== undefined && typeof given.now !== 'function') {
    throw new InvalidOptionError('now', '`now` must be a function returning a Date.')
  }
  if (given.onChange !== undefined && typeof given.onChange !== 'function') {
    throw new InvalidOptionError('onChange', '`onChange` must be a function.')
  }
  if (given.licenseFile !== undefined && typeof given.licenseFile !== 'string') {
    throw new InvalidOptionError('licenseFile', '`licenseFile` must be the file’s text.')
  }
  if (given.storageKey !== undefined && (typeof given.storageKey !== 'string' || given.storageKey === '')) {
    throw new InvalidOptionError('storageKey', '`storageKey` must be a non-empty string.')
  }
  return {
    client,
    productId,
    publicKey,
    licenseKey,
    storage,
    fingerprint,
    gracePeriod: gracePeriod ?? defaultGuardGracePeriod,
    now: given.now ?? (() => new Date()),
    tolerance:
      given.clockToleranceSeconds === undefined
        ? defaultGuardClockTolerance
        : readClockTolerance(given.clockToleranceSeconds),
    licenseFile: given.licenseFile,
    onChange: given.onChange,
    storageKey: given.storageKey ?? `keyturn-guard:${productId}`,
  }
}

/** Compiled on first use (TypeBox interprets instead where a strict CSP forbids code generation). */
function lazy<T>(make: () => T): () => T {
  let value: T | undefined
  return () => {
    value ??= make()
    return value
  }
}
