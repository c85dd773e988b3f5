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
}
