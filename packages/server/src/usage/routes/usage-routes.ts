import type { App } from '../../http/app-types.js'
import type { UsageService } from '../usage-service.js'
import { registerIncrementLicenseUsage } from './increment-license-usage.js'
import { registerIncrementLicenseUsageByKey } from './increment-license-usage-by-key.js'
import { registerResetLicenseUsage } from './reset-license-usage.js'

/** Every route of the usage feature, on the API scope (under /api/v0, behind authentication). */
export function registerUsageRoutes(api: App, usage: UsageService): void {
  registerIncrementLicenseUsageByKey(api, usage)
  registerIncrementLicenseUsage(api, usage)
  registerResetLicenseUsage(api, usage)
}
