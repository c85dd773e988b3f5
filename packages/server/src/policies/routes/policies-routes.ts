import type { App } from '../../http/app-types.js'
import type { PolicyService } from '../policy-service.js'
import { registerCreatePolicy } from './create-policy.js'
import { registerDeletePolicy } from './delete-policy.js'
import { registerGetPolicy } from './get-policy.js'
import { registerListPolicies } from './list-policies.js'
import { registerUpdatePolicy } from './update-policy.js'

/** Every route of the policies feature, on the API scope (under /api/v0, behind authentication). */
export function registerPoliciesRoutes(api: App, policies: PolicyService): void {
  registerListPolicies(api, policies)
  registerCreatePolicy(api, policies)
  registerGetPolicy(api, policies)
  registerUpdatePolicy(api, policies)
  registerDeletePolicy(api, policies)
}
