import type { LicenseId, LicenseStatus, ProductId } from '@keyturn/protocol'

/** A license as the domain sees it: no derived status is stored (STYLE.md §6). */
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
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface LicenseState {
  readonly status: LicenseStatus
  readonly isRevoked: boolean
  readonly isExpired: boolean
  readonly determinedAt: Date
}

/** A license judged once, at one instant. */
export interface LicenseView {
  readonly license: License
  readonly state: LicenseState
}

/** The status at `now`: revoked > expired > active (spec §3). */
export function stateAt(license: License, now: Date): LicenseState {
  const isRevoked = license.revokedAt !== null
  const isExpired = license.expirationDate !== null && license.expirationDate <= now
  const status = isRevoked ? 'revoked' : isExpired ? 'expired' : 'active'
  return { status, isRevoked, isExpired, determinedAt: now }
}

export function viewAt(license: License, now: Date): LicenseView {
  return { license, state: stateAt(license, now) }
}
