import type { App } from '../../http/app-types.js'
import type { ActivationService } from '../activation-service.js'
import { registerActivateLicense } from './activate-license.js'
import { registerActivateLicenseByKey } from './activate-license-by-key.js'
import { registerDeactivateLicenseByKey } from './deactivate-license-by-key.js'
import { registerDeleteActivation } from './delete-activation.js'
import { registerGetActivation } from './get-activation.js'
import { registerHeartbeatActivation } from './heartbeat-activation.js'
import { registerHeartbeatLicenseByKey } from './heartbeat-license-by-key.js'
import { registerListActivations } from './list-activations.js'
import { registerListAllActivations } from './list-all-activations.js'

/** Every route of the activations feature, on the API scope (under /api/v0, behind authentication). */
export function registerActivationsRoutes(api: App, activations: ActivationService): void {
  registerActivateLicenseByKey(api, activations)
  registerDeactivateLicenseByKey(api, activations)
  registerHeartbeatLicenseByKey(api, activations)
  registerActivateLicense(api, activations)
  registerListActivations(api, activations)
  registerListAllActivations(api, activations)
  registerGetActivation(api, activations)
  registerDeleteActivation(api, activations)
  registerHeartbeatActivation(api, activations)
}
