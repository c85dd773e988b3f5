import type { ActivationId, CustomerId, LicenseId, ProductId } from '@keyturn/protocol'

/** Which rows a caller may find: all (an admin key) or one product's. */
export type SearchScope = { readonly productId: ProductId } | undefined

export interface LicenseHitRow {
  readonly id: LicenseId
  readonly key: string
  readonly productId: ProductId
  readonly productName: string
  readonly customerEmail: string | null
}

export interface CustomerHitRow {
  readonly id: CustomerId
  readonly email: string
  readonly name: string | null
}

export interface ActivationHitRow {
  readonly id: ActivationId
  readonly licenseId: LicenseId
  readonly productId: ProductId
  readonly fingerprint: string
  readonly name: string | null
  readonly licenseKey: string
}

/** Each method is one index lookup (migration 2026-11-29-80-search-indexes), at most `limit` rows. */
export interface SearchStore {
  licensesByKeys(keys: readonly string[], scope: SearchScope, limit: number): Promise<LicenseHitRow[]>
  licenseById(id: string, scope: SearchScope): Promise<LicenseHitRow[]>
  customerById(id: string, scope: SearchScope): Promise<CustomerHitRow[]>
  customerByEmail(emailLower: string, scope: SearchScope): Promise<CustomerHitRow[]>
  /** Names starting with `prefix`, compared in lower case (as the engine's `lower()` folds). */
  customersByName(prefix: string, scope: SearchScope, limit: number): Promise<CustomerHitRow[]>
  activationById(id: string, scope: SearchScope): Promise<ActivationHitRow[]>
  activationsByFingerprint(
    fingerprint: string,
    scope: SearchScope,
    limit: number,
  ): Promise<ActivationHitRow[]>
  activationsByName(prefix: string, scope: SearchScope, limit: number): Promise<ActivationHitRow[]>
}
