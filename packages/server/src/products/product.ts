import type { Metadata, ProductBranding, ProductId, ProductStatus } from '@keyturn/protocol'

export interface Product {
  readonly id: ProductId
  readonly name: string
  /** null: active. */
  readonly suspendedAt: Date | null
  /** Seconds: the longest token a client key obtains for this product. */
  readonly clientTokenTtl: number
  /** Its application-facing answers are signed even when the request does not ask (protection/). */
  readonly signResponses: boolean
  /** How it shows itself to customers (mails, portal); every field null when unset. */
  readonly branding: ProductBranding
  readonly metadata: Metadata
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** A product's public signing key; the private half stays in tokens/. */
export interface ProductPublicKey {
  readonly keyId: string
  readonly productId: ProductId
  readonly publicKeyPem: string
  readonly createdAt: Date
}

/** A product with its current public key: what the API shows. */
export interface ProductView {
  readonly product: Product
  readonly currentKey: ProductPublicKey
}

export function productStatus(product: Product): ProductStatus {
  return product.suspendedAt === null ? 'active' : 'suspended'
}
