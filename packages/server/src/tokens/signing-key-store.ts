import type { ProductId } from '@keyturn/protocol'
import type { SigningKeyRecord } from './signing-keys.js'

/** A product's public key as stored, current or retired. */
export interface StoredPublicKey {
  readonly keyId: string
  readonly productId: ProductId
  readonly publicKeyPem: string
  readonly createdAt: Date
  /** null: the current key. */
  readonly retiredAt: Date | null
}

export interface SigningKeyStore {
  /** The product's current key with its encrypted private half, for signing. */
  current(productId: ProductId): Promise<SigningKeyRecord | undefined>
  /** Every key of the product, current first, then newest retired first. */
  list(productId: ProductId): Promise<StoredPublicKey[]>
  /** Retires the current key and makes `next` current, atomically. */
  rotate(productId: ProductId, next: SigningKeyRecord, at: Date): Promise<void>
}
