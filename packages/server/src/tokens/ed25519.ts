import { type KeyObject, sign } from 'node:crypto'
import sodium from 'sodium-native'

/** Signs with one Ed25519 private key: the 64-byte signature of `data`. */
export type Ed25519Sign = (data: Uint8Array) => Promise<Buffer>

/**
 * Where a signature is made. Both give the same bytes (Ed25519 is deterministic); they differ in
 * which CPU pays (docs/decisions/0019-signed-answers.md):
 * - `thread-pool`: node:crypto's callback form, on libuv's thread pool. The event loop pays ~5 µs
 *   to hand it over; the process pays ~60 µs in all (the hand-over, the wake-ups, the signature).
 *   Best when a core is left over beside the event loop: one process on SQLite answered signed
 *   validations at 122% of the rate of `event-loop`.
 * - `event-loop`: libsodium (sodium-native), synchronously: ~14 µs in a hot loop, where
 *   node:crypto's one-shot `sign` takes ~21 µs (OpenSSL 3 sets up a context per call), and no
 *   hand-over. Best when every core is busy anyway: on PostgreSQL (the database takes the other
 *   core) a signed validation cost 156 µs of process CPU instead of 203, and the rate rose 13%.
 */
export type SigningPlace = 'thread-pool' | 'event-loop'

export function ed25519Signer(privateKey: KeyObject, place: SigningPlace): Ed25519Sign {
  if (place === 'thread-pool') {
    return (data) =>
      new Promise((resolve, reject) => {
        sign(null, data, privateKey, (error, signature) =>
          error === null ? resolve(signature) : reject(error),
        )
      })
  }
  const secretKey = sodiumSecretKey(privateKey)
  return (data) => {
    const signature = Buffer.allocUnsafe(sodium.crypto_sign_BYTES)
    sodium.crypto_sign_detached(signature, data, secretKey)
    return Promise.resolve(signature)
  }
}

/** libsodium's form of the key (seed and public key, 64 bytes), in its guarded memory, not on the JS heap. */
function sodiumSecretKey(privateKey: KeyObject): Buffer {
  const { d } = privateKey.export({ format: 'jwk' })
  if (privateKey.asymmetricKeyType !== 'ed25519' || d === undefined) {
    throw new Error('an Ed25519 private key is needed')
  }
  const seed = Buffer.from(d, 'base64url')
  const publicKey = Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES)
  const secretKey = sodium.sodium_malloc(sodium.crypto_sign_SECRETKEYBYTES)
  sodium.crypto_sign_seed_keypair(publicKey, secretKey, seed)
  sodium.sodium_memzero(seed)
  return secretKey
}

/**
 * Fast path (docs/decisions/0028-token-signing-without-signjwt.md): a JWT signed the way jose's `SignJWT` signs it (RFC 7515's compact form:
 * base64url of the header's JSON, of the claims' JSON, and of the signature), with `sign`. Given
 * the header and the claims in the order jose's setters give them, it is the same string as
 * jose's (Ed25519 is deterministic; ed25519.test.ts compares them). What it saves is SignJWT's own
 * work per token, ~45 µs on this machine (jose signs 14,851 tokens/s in a hot loop, one Ed25519
 * signature takes ~14-21 µs), and on SQLite it signs on the thread pool like the signed answers.
 * docs/decisions/0028-token-signing-without-signjwt.md.
 */
export async function signJwt(header: object, claims: object, sign: Ed25519Sign): Promise<string> {
  const input = `${base64urlJson(header)}.${base64urlJson(claims)}`
  const signature = await sign(Buffer.from(input, 'latin1')) // base64url and '.' only
  return `${input}.${signature.toString('base64url')}`
}

function base64urlJson(value: object): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')
}
