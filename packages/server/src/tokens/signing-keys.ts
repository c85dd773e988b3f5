/**
 * Product signing keys: Ed25519 pairs whose private half is encrypted at rest (AES-256-GCM under a
 * key derived from KEYTURN_SECRET) and decrypted only inside this folder.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto'
import type { PublicKeyJwk } from '@keyturn/protocol'

export interface SigningKeyRecord {
  /** RFC 7638 JWK thumbprint of the public key: the `kid`. */
  readonly keyId: string
  readonly publicKeyPem: string
  readonly privateKeyEncrypted: string
}

export function newSigningKey(encryptionKey: Buffer): SigningKeyRecord {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
  return {
    keyId: thumbprint(publicKey),
    publicKeyPem,
    privateKeyEncrypted: encrypt(encryptionKey, privateKey.export({ type: 'pkcs8', format: 'der' })),
  }
}

export function publicKeyJwk(publicKeyPem: string, keyId: string): PublicKeyJwk {
  const { x } = createPublicKey(publicKeyPem).export({ format: 'jwk' })
  return { kty: 'OKP', crv: 'Ed25519', x: x ?? '', kid: keyId, alg: 'EdDSA', use: 'sig' }
}

export function decryptSigningKey(
  encryptionKey: Buffer,
  record: Pick<SigningKeyRecord, 'privateKeyEncrypted'>,
): KeyObject {
  const der = decrypt(encryptionKey, record.privateKeyEncrypted)
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
}

function thumbprint(publicKey: KeyObject): string {
  const { crv, kty, x } = publicKey.export({ format: 'jwk' })
  // RFC 7638: the required members in lexicographic order, no white space.
  const canonical = JSON.stringify({ crv, kty, x })
  return createHash('sha256').update(canonical).digest('base64url')
}

const ivLength = 12
const tagLength = 16

function encrypt(key: Buffer, plaintext: Buffer): string {
  const iv = randomBytes(ivLength)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')
}

function decrypt(key: Buffer, encoded: string): Buffer {
  const bytes = Buffer.from(encoded, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, ivLength))
  decipher.setAuthTag(bytes.subarray(ivLength, ivLength + tagLength))
  return Buffer.concat([decipher.update(bytes.subarray(ivLength + tagLength)), decipher.final()])
}
