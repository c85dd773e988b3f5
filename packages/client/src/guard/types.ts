/**
 * The license guard's public types: the contract `createLicenseGuard` implements and the Python
 * and Go guards mirror (snake_case in Python). Not exported from the package until the guard
 * itself is: these types describe the agreed shape only.
 *
 * States
 * - `valid`: the server answered a signed validation with `isValid: true` now (`reason: 'online'`),
 *   or the server is unreachable and a verified stored proof is still before its `checkInBy`
 *   (`reason: 'offline'`).
 * - `grace`: the server is unreachable (or answers 5xx), the stored proof verifies, `checkInBy` has
 *   passed, and now is before `checkInBy + gracePeriod` (`reason: 'check_in_overdue'`). The
 *   policy's grace period, when the proof carries one, wins over the `gracePeriod` option.
 * - `invalid`: anything else. Never fail open: an error the guard does not understand is `invalid`.
 *
 * Reasons for `invalid`
 * - a validation reason from the server's signed answer (`expired`, `revoked`, `suspended`,
 *   `payment_overdue`, `not_activated`, `entitlements_missing`, `usage_exceeded`);
 * - `grace_expired`: offline past `checkInBy + gracePeriod`;
 * - `no_proof`: offline with no stored proof, or a stored proof that does not verify (a tampered
 *   store is treated as absent);
 * - `clock_tampered`: the latest signed server time the guard has seen is later than `now()` by
 *   more than `clockToleranceSeconds`;
 * - a verification code of the stored proof itself (`LicenseFileErrorCode`) when it fails for a
 *   reason other than tampering (e.g. `expired`, `fingerprint_mismatch`).
 */
import type { LicenseFileErrorCode } from '../errors.js'

export type LicenseGuardState = 'valid' | 'grace' | 'invalid'

export type LicenseGuardValidReason = 'online' | 'offline'
export type LicenseGuardGraceReason = 'check_in_overdue'
export type LicenseGuardInvalidReason =
  | 'expired'
  | 'revoked'
  | 'suspended'
  | 'payment_overdue'
  | 'not_activated'
  | 'entitlements_missing'
  | 'usage_exceeded'
  | 'grace_expired'
  | 'no_proof'
  | 'clock_tampered'
  | LicenseFileErrorCode

export type LicenseGuardReason = LicenseGuardValidReason | LicenseGuardGraceReason | LicenseGuardInvalidReason

/** What `check()` answers. `license`/`entitlements` come from the proof the decision rests on. */
export interface LicenseGuardResult {
  readonly state: LicenseGuardState
  readonly reason: LicenseGuardReason
  /** The license as the last verified signed proof states it; `null` when there is none. */
  readonly license: { readonly id: string; readonly status: string; readonly expiresAt: string | null } | null
  /** Entitlement codes of that license (empty when there is no proof). */
  readonly entitlements: readonly string[]
  /**
   * Until when this state holds without a successful check-in: `checkInBy` for `valid`,
   * `checkInBy + gracePeriod` for `grace`, `null` for `invalid` or when there is no check-in.
   */
  readonly validUntil: Date | null
}

/** Where the guard keeps its last good signed proof; values are opaque strings. */
export interface LicenseGuardStorage {
  get(key: string): Promise<string | null> | string | null
  set(key: string, value: string): Promise<void> | void
  delete(key: string): Promise<void> | void
}

export interface LicenseGuardStateChange {
  readonly previous: LicenseGuardResult | null
  readonly current: LicenseGuardResult
}
