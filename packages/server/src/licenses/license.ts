import type {
  CustomerId,
  LicenseId,
  LicenseStatus,
  Metadata,
  PolicyId,
  ProductId,
  ValidationReason,
} from '@keyturn/protocol'
import type { CheckIn } from '../policies/check-in.js'

/** A license as the domain sees it: no derived status is stored (docs/decisions/0001-licenses.md). */
export interface License {
  readonly id: LicenseId
  readonly productId: ProductId
  readonly key: string
  /** null: unlimited. */
  readonly maxActivations: number | null
  /** null: never expires. */
  readonly expirationDate: Date | null
  /** null: not revoked. */
  readonly revokedAt: Date | null
  /**
   * Activation rows; kept by the activations store in the same transactions. With a heartbeat TTL it
   * may include lapsed ones not yet swept: LicenseService shows only the alive ones.
   */
  readonly activationCount: number
  /** Seconds an activation holds its seat after a heartbeat; null: activations never lapse. */
  readonly heartbeatTtl: number | null
  /** null: unmetered. */
  readonly maxUses: number | null
  readonly uses: number
  readonly usesResetAt: Date | null
  /** null: no customer. */
  readonly customerId: CustomerId | null
  /** The policy it was made from; null: none. */
  readonly policyId: PolicyId | null
  /** Its own entitlement codes and its policy's, as they are now: sorted, no duplicates. */
  readonly entitlements: readonly string[]
  readonly metadata: Metadata
  /**
   * Made from a `firstActivation` policy and not activated yet: the seconds its first activation adds
   * to its time to make `expirationDate` (null until then). null once that happened, or otherwise.
   */
  readonly firstActivationDuration: number | null
  /**
   * A payment provider reported a failed payment (integrations/): the license keeps working until
   * this instant, then validates `payment_overdue` until the next payment. null: nothing overdue.
   */
  readonly paymentGraceEndsAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface LicenseState {
  readonly status: LicenseStatus
  readonly isRevoked: boolean
  readonly isExpired: boolean
  readonly determinedAt: Date
}

/**
 * Expiration dates lie before this instant. Later ones have no four-digit-year ISO 8601 form (which
 * SQLite sorts as text and PostgreSQL parses), and lists sort "never expires" here, after every date.
 */
export const expirationDateBound = new Date('9999-12-31T23:59:59.999Z')

/** A license judged once, at one instant. */
export interface LicenseView {
  readonly license: License
  readonly state: LicenseState
}

/** A validation's outcome: the license as it stands and, when it is not valid, why. */
export interface LicenseValidation {
  readonly isValid: boolean
  readonly reason: ValidationReason | null
  readonly view: LicenseView
  /** The next check-in (valid answers of licenses whose policy requires one); empty otherwise. */
  readonly checkIn: CheckIn
}

/** The status at `now`: revoked > expired > active (docs/decisions/0001-licenses.md). */
export function stateAt(license: License, now: Date): LicenseState {
  const isRevoked = license.revokedAt !== null
  const isExpired = license.expirationDate !== null && license.expirationDate <= now
  const status = isRevoked ? 'revoked' : isExpired ? 'expired' : 'active'
  return { status, isRevoked, isExpired, determinedAt: now }
}

export function viewAt(license: License, now: Date): LicenseView {
  return { license, state: stateAt(license, now) }
}
