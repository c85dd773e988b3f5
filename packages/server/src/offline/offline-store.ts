import type { ActivationId, LicenseId, ProductId } from '@keyturn/protocol'

/** The activation an offline request made, and when it was first answered. */
export interface OfflineRequestRecord {
  readonly activationId: ActivationId
  readonly issuedAt: Date
}

/** What offline activation keeps beside licenses and activations. */
export interface OfflineStore {
  /** Ids of the product's licenses whose key has this hint (a few at most: 96 bits of a hash). */
  licensesByKeyHint(productId: ProductId, keyHint: string): Promise<readonly LicenseId[]>
  findRequest(licenseId: LicenseId, nonce: string): Promise<OfflineRequestRecord | undefined>
  /** Records the request unless it is recorded already; answers the record that stands. */
  recordRequest(
    licenseId: LicenseId,
    nonce: string,
    record: OfflineRequestRecord,
  ): Promise<OfflineRequestRecord>
  /** When the activation's offline deactivation is locked until, if it is. */
  lockedUntil(activationId: ActivationId): Promise<Date | null>
  /**
   * Counts a wrong code (one statement: concurrent wrong codes all count) and answers the count in
   * a row; at `limit` the count restarts and the activation locks until `lockUntil`.
   */
  recordFailure(activationId: ActivationId, limit: number, lockUntil: Date): Promise<number>
}
