/**
 * @module `@keyturn/client/node`: the parts of the client that need Node (machine fingerprints, the
 * guard's file storage),
 * kept out of `@keyturn/client` so browser bundles stay clean.
 */

export { type FileGuardStorageOptions, fileGuardStorage } from './file-guard-storage.js'
export {
  fingerprintFromMachineId,
  MachineFingerprintError,
  type MachineFingerprintErrorCode,
  type MachineFingerprintOptions,
  machineFingerprint,
} from './machine-fingerprint.js'
