import type { ProductResource } from '@keyturn/protocol'
import { publicKeyJwk } from '../tokens/signing-keys.js'
import { type ProductView, productStatus } from './product.js'

/** The only converter from the domain's product to the wire shape. */
export function toProductResource({ product, currentKey }: ProductView): ProductResource {
  return {
    id: product.id,
    object: 'Product',
    name: product.name,
    status: productStatus(product),
    clientTokenTtl: product.clientTokenTtl,
    signResponses: product.signResponses,
    branding: product.branding,
    publicKey: currentKey.publicKeyPem,
    publicKeyJwk: publicKeyJwk(currentKey.publicKeyPem, currentKey.keyId),
    keyId: currentKey.keyId,
    metadata: product.metadata,
    createdAt: product.createdAt.toISOString(),
    updatedAt: product.updatedAt.toISOString(),
  }
}
