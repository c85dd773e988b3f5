import type { EntitlementResource } from '@keyturn/protocol'
import type { Entitlement } from './entitlement.js'

/** The only converter from the domain's entitlement to the wire shape. */
export function toEntitlementResource(entitlement: Entitlement): EntitlementResource {
  return {
    id: entitlement.id,
    object: 'Entitlement',
    productId: entitlement.productId,
    code: entitlement.code,
    name: entitlement.name,
    createdAt: entitlement.createdAt.toISOString(),
    updatedAt: entitlement.updatedAt.toISOString(),
  }
}
