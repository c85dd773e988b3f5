import type { App } from '../../http/app-types.js'
import type { TokenService } from '../token-service.js'
import { registerCreateLicenseToken } from './create-license-token.js'
import { registerCreateLicenseTokenByKey } from './create-license-token-by-key.js'
import { registerListProductKeys } from './list-product-keys.js'
import { registerRotateProductKey } from './rotate-product-key.js'

/** Every route of the tokens feature, on the API scope (under /api/v0, behind authentication). */
export function registerTokensRoutes(api: App, tokens: TokenService): void {
  registerCreateLicenseToken(api, tokens)
  registerCreateLicenseTokenByKey(api, tokens)
  registerListProductKeys(api, tokens)
  registerRotateProductKey(api, tokens)
}
