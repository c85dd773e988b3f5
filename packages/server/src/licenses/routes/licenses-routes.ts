import type { App } from '../../http/app-types.js'
import type { LicenseService } from '../license-service.js'
import { registerCreateLicense } from './create-license.js'
import { registerGetLicense } from './get-license.js'
import { registerListLicenses } from './list-licenses.js'
import { registerReinstateLicense } from './reinstate-license.js'
import { registerRenewLicense } from './renew-license.js'
import { registerRevokeLicense } from './revoke-license.js'
import { registerUpdateLicense } from './update-license.js'
import { registerValidateLicense } from './validate-license.js'

/** Every route of the licenses feature, on the API scope (under /api/v0, behind authentication). */
export function registerLicensesRoutes(api: App, licenses: LicenseService): void {
  registerListLicenses(api, licenses)
  registerCreateLicense(api, licenses)
  registerValidateLicense(api, licenses)
  registerGetLicense(api, licenses)
  registerUpdateLicense(api, licenses)
  registerRevokeLicense(api, licenses)
  registerReinstateLicense(api, licenses)
  registerRenewLicense(api, licenses)
}
