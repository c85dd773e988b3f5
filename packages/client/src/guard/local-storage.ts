import type { LicenseGuardStorage } from './types.js'

/** The parts of the Web Storage API the adapter uses (`localStorage` fits). */
export interface WebStorageLike {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/**
 * Guard storage in the browser's `localStorage` (or any Web Storage object). What is stored is a
 * signed answer: editing it makes it fail verification, and the guard then treats it as absent.
 *
 * @example
 * ```ts
 * const guard = createLicenseGuard({ client, productId, publicKey, licenseKey, storage: localStorageGuardStorage() })
 * ```
 */
export function localStorageGuardStorage(storage?: WebStorageLike): LicenseGuardStorage {
  // Outside browsers there is no `localStorage` global: typed here as maybe absent.
  const store = storage ?? (globalThis as { localStorage?: WebStorageLike }).localStorage
  if (store === undefined) {
    throw new TypeError('localStorageGuardStorage needs localStorage (a browser) or a Web Storage object')
  }
  return {
    get: (key) => store.getItem(key),
    set: (key, value) => store.setItem(key, value),
    delete: (key) => store.removeItem(key),
  }
}
