import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'

/**
 * Keys derived from KEYTURN_SECRET, one per purpose, so a leak of one use never weakens another.
 */
export interface SecretKeys {
  /** Keys the HMAC-SHA256 digests of API-key secrets. */
  readonly apiKeyDigest: Buffer
  /** Encrypts product signing keys at rest (AES-256-GCM). */
  readonly signingKeyEncryption: Buffer
}

export function deriveSecretKeys(masterSecret: string): SecretKeys {
  const derive = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', masterSecret, 'keyturn', `keyturn/${purpose}/v1`, 32))
  return { apiKeyDigest: derive('api-key-digest'), signingKeyEncryption: derive('signing-key-encryption') }
}

export function digestSecret(key: Buffer, secret: string): string {
  return createHmac('sha256', key).update(secret).digest('hex')
}

export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && timingSafeEqual(left, right)
}
