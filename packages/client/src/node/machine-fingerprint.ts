/// <reference types="node" />
/**
 * @module Machine fingerprints for Node: a stable id of the computer, read from the operating
 * system and hashed with a per-product salt, so the value sent to the server is never the raw OS
 * id and two products see unrelated fingerprints. Node only: browsers import `@keyturn/client`,
 * which never loads this file.
 */
import { execFileSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'

/** Why no fingerprint could be made. A closed union: switch on it. */
export type MachineFingerprintErrorCode = 'no_machine_id' | 'invalid_salt'

/** No stable machine id was found (e.g. a container without one), or the salt is unusable. */
export class MachineFingerprintError extends Error {
  readonly code: MachineFingerprintErrorCode

  constructor(code: MachineFingerprintErrorCode, message: string) {
    super(message)
    this.name = 'MachineFingerprintError'
    this.code = code
  }
}

export interface MachineFingerprintOptions {
  /** A per-product salt (at least 8 characters), the same on every install of the product. */
  salt: string
  /** Where to read from; the defaults are the process's environment and platform. */
  env?: Record<string, string | undefined>
  platform?: NodeJS.Platform
  /** Reads a file, `undefined` when absent (tests pass their own). */
  readFile?: (path: string) => string | undefined
  /** Runs a command and returns its output, `undefined` when it fails. */
  run?: (command: string, args: readonly string[]) => string | undefined
}

const minSaltLength = 8
const maxMachineIdLength = 256

/** HMAC-SHA256 keyed by the salt over the machine id, in lowercase hex (64 characters). */
export function fingerprintFromMachineId(salt: string, machineId: string): string {
  return createHmac('sha256', salt).update(machineId).digest('hex')
}

/**
 * The machine's fingerprint: `KEYTURN_MACHINE_ID` when set, else Linux `/etc/machine-id` or
 * `/var/lib/dbus/machine-id`, macOS `IOPlatformUUID`, Windows `MachineGuid`, hashed with `salt`.
 * Throws `MachineFingerprintError` (`no_machine_id`) rather than inventing a random id.
 */
export function machineFingerprint(options: MachineFingerprintOptions): string {
  const salt = options.salt
  if (typeof salt !== 'string' || salt.length < minSaltLength) {
    throw new MachineFingerprintError(
      'invalid_salt',
      `\`salt\` must be a string of at least ${minSaltLength} characters.`,
    )
  }
  const machineId = readMachineId(options)
  if (machineId === undefined) {
    throw new MachineFingerprintError(
      'no_machine_id',
      'No stable machine id found (containers often have none): set KEYTURN_MACHINE_ID to a value that survives restarts.',
    )
  }
  return fingerprintFromMachineId(salt, machineId)
}

function readMachineId(options: MachineFingerprintOptions): string | undefined {
  const env = options.env ?? process.env
  const readFile = options.readFile ?? readFileOrUndefined
  const run = options.run ?? runOrUndefined
  const fromEnv = usable(env.KEYTURN_MACHINE_ID)
  if (fromEnv !== undefined) {
    return fromEnv
  }
  switch (options.platform ?? process.platform) {
    case 'darwin':
      return usable(
        run('ioreg', ['-rd1', '-c', 'IOPlatformExpertDevice'])?.match(
          /"IOPlatformUUID"\s*=\s*"([^"]+)"/,
        )?.[1],
      )
    case 'win32':
      return usable(
        run('reg', ['query', 'HKLM\\SOFTWARE\\Microsoft\\Cryptography', '/v', 'MachineGuid'])?.match(
          /MachineGuid\s+REG_SZ\s+(\S+)/,
        )?.[1],
      )
    default:
      return usable(readFile('/etc/machine-id')) ?? usable(readFile('/var/lib/dbus/machine-id'))
  }
}

/** A trimmed, non-empty, bounded id; `undefined` otherwise (an empty file is no id). */
function usable(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed && trimmed.length <= maxMachineIdLength ? trimmed : undefined
}

function readFileOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

function runOrUndefined(command: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 5000, windowsHide: true })
  } catch {
    return undefined
  }
}
