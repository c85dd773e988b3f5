/** The part of sodium-native (libsodium's bindings) Keyturn uses; the package ships no types. */
declare module 'sodium-native' {
  const sodium: {
    readonly crypto_sign_BYTES: number
    readonly crypto_sign_PUBLICKEYBYTES: number
    readonly crypto_sign_SECRETKEYBYTES: number
    sodium_malloc(size: number): Buffer
    sodium_memzero(buffer: Uint8Array): void
    crypto_sign_seed_keypair(publicKey: Uint8Array, secretKey: Uint8Array, seed: Uint8Array): void
    crypto_sign_detached(signature: Uint8Array, message: Uint8Array, secretKey: Uint8Array): void
  }
  export = sodium
}
