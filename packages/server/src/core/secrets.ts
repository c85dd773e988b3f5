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
  /** Encrypts stored Idempotency-Key responses that hold a secret or token (AES-256-GCM). */
  readonly idempotencyResponseEncryption: Buffer
  /** Encrypts queued mail (recipient, subject, bodies) until it is sent (AES-256-GCM). */
  readonly mailPayloadEncryption: Buffer
  /** Keys the HMAC-SHA256 digests of customer portal sign-in codes and of the addresses they are for. */
  readonly portalCodeDigest: Buffer
  /** Encrypts payment-provider signing secrets at rest (AES-256-GCM). */
  readonly integrationSecretEncryption: Buffer
  /** Derives each offline activation's deactivation secret (HMAC-SHA256 of its id). */
  readonly offlineDeactivation: Buffer
  /** Encrypts operators' TOTP seeds at rest (AES-256-GCM). */
  readonly operatorTotpEncryption: Buffer
  /** Keys the HMAC-SHA256 digests of operators' recovery codes. */
  readonly operatorRecoveryCodeDigest: Buffer
  /** Encrypts the single sign-on request state kept in a short-lived cookie (AES-256-GCM). */
  readonly operatorOidcStateEncryption: Buffer
}

export function deriveSecretKeys(masterSecret: string): SecretKeys {
  const derive = (purpose: string) =>
    Buffer.from(hkdfSync('sha256', masterSecret, 'keyturn', `keyturn/${purpose}/v1`, 32))
  return {
    apiKeyDigest: derive('api-key-digest'),
    signingKeyEncryption: derive('signing-key-encryption'),
    webhookSecretEncryption: derive('webhook-secret-encryption'),
    idempotencyResponseEncryption: derive('idempotency-response-encryption'),
    mailPayloadEncryption: derive('mail-payload-encryption'),
    portalCodeDigest: derive('portal-code-digest'),
    integrationSecretEncryption: derive('integration-secret-encryption'),
    offlineDeactivation: derive('offline-deactivation'),
    operatorTotpEncryption: derive('operator-totp-encryption'),
    operatorRecoveryCodeDigest: derive('operator-recovery-code-digest'),
    operatorOidcStateEncryption: derive('operator-oidc-state-encryption'),
  }
}

/**
 * What the database keeps to recognise its master secret (storage/secret-check.ts): an HMAC of a
 * constant under a key derived for this purpose alone, so it reveals nothing of the secret or of
 * the other derived keys. Hex.
 */
export function secretCheckValue(masterSecret: string): string {
  const key = Buffer.from(hkdfSync('sha256', masterSecret, 'keyturn', 'keyturn/secret-check/v1', 32))
  return createHmac('sha256', key).update('keyturn master secret check').digest('hex')
}

const ivLength = 12
const tagLength = 16

/**
 * AES-256-GCM: base64url of iv (12) || tag (16) || ciphertext. `context` (additional authenticated
 * data, not stored) binds the text to where it belongs: decrypting needs the same context.
 */
export function encryptText(key: Buffer, plaintext: string, context?: string): string {
  const iv = randomBytes(ivLength)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  if (context !== undefined) {
    cipher.setAAD(Buffer.from(context, 'utf8'))
  }
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')
}

/** Throws when the key or `context` differs from the encryption's, or the text was altered. */
export function decryptText(key: Buffer, encoded: string, context?: string): string {
  const bytes = Buffer.from(encoded, 'base64url')
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, ivLength))
  if (context !== undefined) {
    decipher.setAAD(Buffer.from(context, 'utf8'))
  }
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
