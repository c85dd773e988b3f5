/**
 * The license guard's public types: the contract `createLicenseGuard` implements and the Python
 * and Go guards mirror (snake_case in Python). docs/guides/offline.md ("Surviving outages: the
 * license guard") describes the states and reasons for users.
 *
 * States
 * - `valid`: the server answered a signed validation with `isValid: true` now (`reason: 'online'`),
 *   or the server is unreachable and a verified stored proof is still before its deadline
 *   (`reason: 'offline'`). The deadline is the proof's `checkInBy`, or the proof's own signed time
 *   when it carries none (no check-in required: every offline check is then past the deadline).
 * - `grace`: the server is unreachable (or answers 5xx or 429, or an answer fails its signature
 *   check), the stored proof verifies, its deadline has passed, and now is before deadline +
 *   grace period (`reason: 'check_in_overdue'`). The policy's grace period, when the proof carries
 *   one, wins over the `gracePeriod` option.
 * - `invalid`: anything else. Never fail open: an error the guard does not understand is `invalid`.
 *
 * Reasons for `invalid`
 * - a validation reason from the server's signed answer (`expired`, `revoked`, `suspended`,
 *   `payment_overdue`, `not_activated`, `entitlements_missing`, `usage_exceeded`), online or from
 *   the stored answer offline; `expired` also when the license's expiration date passes offline;
 * - `license_not_found`: the server answered 404 (the key is unknown to it);
 * - `request_refused`: the server refused the request with another 4xx (a bad or deleted API key,
 *   invalid input); the stored proof is kept but not used;
 * - `grace_expired`: offline past deadline + grace period;
 * - `no_proof`: offline with no stored proof, or a stored proof that does not verify (a tampered
 *   store is treated as absent);
 * - `clock_tampered`: the latest signed server time the guard has seen is later than `now()` by
 *   more than `clockToleranceSeconds`;
 * - a verification code of the `licenseFile` option (`LicenseFileErrorCode`) when it is the only
 *   proof and fails (e.g. `expired`, `fingerprint_mismatch`);
 * - `unexpected_error`: the online call failed in a way the guard does not know.
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
  | 'license_not_found'
  | 'request_refused'
  | 'grace_expired'
  | 'no_proof'
  | 'clock_tampered'
  | 'unexpected_error'
  | LicenseFileErrorCode

export type LicenseGuardReason = LicenseGuardValidReason | LicenseGuardGraceReason | LicenseGuardInvalidReason

/** What `check()` answers. `license`/`entitlements` come from the proof the decision rests on. */
export interface LicenseGuardResult {
  readonly state: LicenseGuardState
  readonly reason: LicenseGuardReason
  /** The license as the last verified signed proof states it; `null` when there is none. */
  readonly license: { readonly id: string; readonly status: string; readonly expiresAt: string | null } | null
  /** Entitlement codes of that license (empty when there is no proof or the state is `invalid`). */
  readonly entitlements: readonly string[]
  /**
   * Until when this state holds without a successful check-in: the deadline for `valid`, the
   * deadline + grace period for `grace` (either at most the license's or file's expiry), `null`
   * for `invalid`.
   */
  readonly validUntil: Date | null
}

/** Where the guard keeps its last signed proof; values are opaque strings. */
export interface LicenseGuardStorage {
  get(key: string): Promise<string | null> | string | null
  set(key: string, value: string): Promise<void> | void
  delete(key: string): Promise<void> | void
}

export interface LicenseGuardStateChange {
  readonly previous: LicenseGuardResult | null
  readonly current: LicenseGuardResult
}
