import type { EntitlementId, ProductId } from '@keyturn/protocol'

/** What licenses and policies need of entitlements; app.ts wires the entitlements service in. */
export interface EntitlementResolver {
  /** The product's entitlements with these codes; an unknown code is a 400 naming it at `pointer`. */
  resolve(
    productId: ProductId,
    codes: readonly string[],
    pointer: string,
  ): Promise<readonly { readonly id: EntitlementId; readonly code: string }[]>
}
