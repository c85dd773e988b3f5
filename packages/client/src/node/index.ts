/**
 * @module `@keyturn/client/node`: the parts of the client that need Node (machine fingerprints),
 * kept out of `@keyturn/client` so browser bundles stay clean.
 */
export {
  fingerprintFromMachineId,
  MachineFingerprintError,
  type MachineFingerprintErrorCode,
  type MachineFingerprintOptions,
  machineFingerprint,
} from './machine-fingerprint.js'
