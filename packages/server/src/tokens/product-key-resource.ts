import type { ProductKeyResource } from '@keyturn/protocol'
import type { StoredPublicKey } from './signing-key-store.js'
import { publicKeyJwk } from './signing-keys.js'

export function toProductKeyResource(key: StoredPublicKey): ProductKeyResource {
  return {
    object: 'ProductKey',
    keyId: key.keyId,
    productId: key.productId,
    publicKey: key.publicKeyPem,
    publicKeyJwk: publicKeyJwk(key.publicKeyPem, key.keyId),
    isCurrent: key.retiredAt === null,
    createdAt: key.createdAt.toISOString(),
    retiredAt: key.retiredAt?.toISOString() ?? null,
  }
}
