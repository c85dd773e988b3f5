import type { EntitlementId, ProductId } from '@keyturn/protocol'

/** A feature of a product that licenses unlock, named by a code unique within the product. */
export interface Entitlement {
  readonly id: EntitlementId
  readonly productId: ProductId
  readonly code: string
  readonly name: string
  readonly createdAt: Date
  readonly updatedAt: Date
}
