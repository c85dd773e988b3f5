import type { FailingDelivery, ProductId } from '@keyturn/protocol'

/**
 * Which deliveries: every one (an admin, no filter); those of one product's events (an admin
 * asking for a product); or, for a product key, those of its product's endpoints only.
 */
export type DeliveryScope = undefined | { readonly productId: ProductId; readonly ownEndpointsOnly: boolean }

export interface FailuresStore {
  /** Up to `limit` deliveries whose last attempt failed (pending again, or given up), latest attempt first. */
  failingDeliveries(limit: number, scope: DeliveryScope): Promise<FailingDelivery[]>
}
