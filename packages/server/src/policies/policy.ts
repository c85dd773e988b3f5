import type { ExpirationBasis, Metadata, PolicyId, ProductId } from '@keyturn/protocol'

/** A plan licenses are made from: a template for seats and expiry, and a live set of entitlements. */
export interface Policy {
  readonly id: PolicyId
  readonly productId: ProductId
  readonly name: string
  /** null: unlimited. */
  readonly maxActivations: number | null
  /** Seconds; null: licenses never expire. */
  readonly duration: number | null
  readonly expirationBasis: ExpirationBasis
  /** Floating seats of its licenses (seconds a heartbeat holds a seat); null: seats never lapse. */
  readonly heartbeatTtl: number | null
  /** Metered uses of its licenses; null: unmetered. */
  readonly maxUses: number | null
  /** Entitlement codes, sorted. */
  readonly entitlements: readonly string[]
  readonly metadata: Metadata
  /** Portal deactivations per `transferPeriod` (read live by the portal); null: unlimited. */
  readonly maxTransfers: number | null
  /** Seconds. */
  readonly transferPeriod: number
  readonly createdAt: Date
  readonly updatedAt: Date
}
