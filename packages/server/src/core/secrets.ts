import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto'

/**
 * Keys derived from KEYTURN_SECRET, one per purpose, so a leak of one use never weakens another.
 */
export interface SecretKeys {
  /** Keys the HMAC-SHA256 digests of API-key secrets. */
  readonly apiKeyDigest: Buffer
  /** Encrypts product signing keys at rest (AES-256-GCM). */
  readonly signingKeyEncryption: Buffer
  /** Encrypts webhook endpoint secrets at rest (AES-256-GCM). */
  readonly webhookSecretEncryption: Buffer
}

export function deriveSecretKeys(masterSecret: string): SecretKeys {
  const derive = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', masterSecret, 'keyturn', `keyturn/${purpose}/v1`, 32))
  return {
    apiKeyDigest: derive('api-key-digest'),
    signingKeyEncryption: derive('signing-key-encryption'),
    webhookSecretEncryption: derive('webhook-secret-encryption'),
  }
}

const ivLength = 12
const tagLength = 16

/** AES-256-GCM: base64url of iv (12) || tag (16) || ciphertext. */
export function encryptText(key: Buffer, plaintext: string): string {
  const iv = randomBytes(ivLength)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')
}

export function decryptText(key: Buffer, encoded: string): string {
  const bytes = Buffer.from(encoded, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, ivLength))
  decipher.setAuthTag(bytes.subarray(ivLength, ivLength + tagLength))
  return Buffer.concat([decipher.update(bytes.subarray(ivLength + tagLength)), decipher.final()]).toString(
    'utf8',
  )
}

export function digestSecret(key: Buffer, secret: string): string {
  return createHmac('sha256', key).update(secret).digest('hex')
}

export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && timingSafeEqual(left, right)
}
