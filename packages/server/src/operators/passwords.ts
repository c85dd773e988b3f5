import { randomBytes } from 'node:crypto'
import { type Algorithm, hash, verify } from '@node-rs/argon2'
import { dictionary } from '@zxcvbn-ts/language-common'

/** The library's `Algorithm.Argon2id` (a const enum, which this build cannot read by name). */
const argon2id: Algorithm.Argon2id = 2

/** Argon2id at OWASP's recommended minimum: 19 MiB of memory, 2 passes, 1 lane. */
const argon2Options = {
  algorithm: argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const

export const minPasswordLength = 12
/** Long enough for any passphrase, short enough that hashing stays bounded. */
export const maxPasswordLength = 256

let common: ReadonlySet<string> | undefined

function commonPasswords(): ReadonlySet<string> {
  common ??= new Set(dictionary['passwords-common'] as readonly string[])
  return common
}

/** Why a password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length
  if (length < minPasswordLength) {
    return `a password has at least ${minPasswordLength} characters`
  }
  if (length > maxPasswordLength) {
    return `a password has at most ${maxPasswordLength} characters`
  }
  if (commonPasswords().has(password.toLowerCase())) {
    return 'this password is on a list of commonly used passwords; choose another'
  }
  return undefined
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, argon2Options)
}

/** A hash of a random password: verified against when the account is unknown, so the work is the same. */
let dummyHash: Promise<string> | undefined

export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(32).toString('base64url'))
  const against = passwordHash ?? (await dummyHash)
  try {
    const matches = await verify(against, password)
    return matches && passwordHash !== undefined
  } catch {
    return false
  }
}
