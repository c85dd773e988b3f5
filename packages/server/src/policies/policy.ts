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
  /** Seconds a license file lives when its request gives no ttl (read live); null: no expiry. */
  readonly licenseFileTtl: number | null
  /** The longest token ttl its licenses may ask for (read live); null: the standard year. */
  readonly tokenTtlMax: number | null
  /** Whether license files carry the license's metadata (read live). */
  readonly licenseFileMetadata: boolean
  /** Portal deactivations per `transferPeriod` (read live by the portal); null: unlimited. */
  readonly maxTransfers: number | null
  /** Seconds. */
  readonly transferPeriod: number
  /** Seconds between required check-ins (read live); null: no check-in. */
  readonly checkInInterval: number | null
  /** Seconds of grace after a missed check-in (read live); null: the application's own setting. */
  readonly gracePeriod: number | null
  /** A provider sale of quantity N gets N × maxActivations (integrations/; read live). */
  readonly seatsPerQuantity: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
}
