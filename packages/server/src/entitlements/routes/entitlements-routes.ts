import type { App } from '../../http/app-types.js'
import type { EntitlementService } from '../entitlement-service.js'
import { registerCreateEntitlement } from './create-entitlement.js'
import { registerDeleteEntitlement } from './delete-entitlement.js'
import { registerGetEntitlement } from './get-entitlement.js'
import { registerListEntitlements } from './list-entitlements.js'
import { registerUpdateEntitlement } from './update-entitlement.js'

/** Every route of the entitlements feature, on the API scope (under /api/v0, behind authentication). */
export function registerEntitlementsRoutes(api: App, entitlements: EntitlementService): void {
  registerListEntitlements(api, entitlements)
  registerCreateEntitlement(api, entitlements)
  registerGetEntitlement(api, entitlements)
  registerUpdateEntitlement(api, entitlements)
  registerDeleteEntitlement(api, entitlements)
}
