import type { LicenseId, ProductId } from '@keyturn/protocol'
import type { Principal } from '../core/principal.js'
import type { LicenseView } from './license.js'

/**
 * What activations, tokens and usage counts need of licenses (LicenseService fits): a license the
 * caller may see and use now, or 409 `license_not_active` (`refusal` ends its detail). Read with
 * its product's suspension and the caller's API key in one statement, so the routes that use it
 * confirm their key there (config.confirmsApiKey).
 */
export interface UsableLicenses {
  getUsable(principal: Principal, id: LicenseId, refusal: string): Promise<LicenseView>
  getUsableByKey(
    principal: Principal,
    key: string,
    productId: ProductId,
    refusal: string,
  ): Promise<LicenseView>
}
