import type { ActivationId, LicenseId, ProductId } from '@keyturn/protocol'

/** One machine using a license seat. */
export interface Activation {
  readonly id: ActivationId
  readonly licenseId: LicenseId
  readonly productId: ProductId
  readonly fingerprint: string
  readonly name: string | null
  readonly metadata: Readonly<Record<string, unknown>> | null
  readonly createdAt: Date
  readonly lastSeenAt: Date
  /** The last heartbeat; activating counts as one. */
  readonly lastHeartbeatAt: Date
  /** When the seat lapses without another heartbeat: lastHeartbeatAt + the license's TTL; null: never. */
  readonly expiresAt: Date | null
}

/** The activation a new machine gets at `at`: its first heartbeat, and its lease when the license has one. */
export function newActivationAt(
  fields: Pick<Activation, 'id' | 'licenseId' | 'productId' | 'fingerprint' | 'name' | 'metadata'>,
  at: Date,
  heartbeatTtl: number | null,
): Activation {
  return {
    id: fields.id,
    licenseId: fields.licenseId,
    productId: fields.productId,
    fingerprint: fields.fingerprint,
    name: fields.name,
    metadata: fields.metadata,
    createdAt: at,
    lastSeenAt: at,
    lastHeartbeatAt: at,
    expiresAt: leaseEnd(at, heartbeatTtl),
  }
}

/** Whether the activation holds its seat at `now` (a floating seat lapses at `expiresAt`). */
export function isAlive(activation: Pick<Activation, 'expiresAt'>, now: Date): boolean {
  return activation.expiresAt === null || activation.expiresAt > now
}

/** The end of a lease that starts at `at`, for a license with this heartbeat TTL (seconds). */
export function leaseEnd(at: Date, heartbeatTtl: number | null): Date | null {
  return heartbeatTtl === null ? null : new Date(at.getTime() + heartbeatTtl * 1000)
}
