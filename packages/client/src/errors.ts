import type { ErrorCode, FieldError, Problem } from '../../protocol/src/index.js'

/** The API refused a request: carries the RFC 9457 problem's fields. */
export class KeyturnApiError extends Error {
  readonly status: number
  readonly code: ErrorCode
  readonly detail: string
  readonly requestId: string | undefined
  readonly errors: readonly FieldError[]
  readonly problem: Problem
  /** The answer's `Retry-After`, in milliseconds, when it had one. */
  readonly retryAfterMs: number | undefined

  constructor(problem: Problem, retryAfterMs?: number) {
    super(`${problem.code}: ${problem.detail}`)
    this.name = 'KeyturnApiError'
    this.status = problem.status
    this.code = problem.code
    this.detail = problem.detail
    this.requestId = problem.requestId
    this.errors = problem.errors ?? []
    this.problem = problem
    this.retryAfterMs = retryAfterMs
  }
}

/** The server could not be reached, or did not answer with Keyturn's JSON. */
export class KeyturnConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'KeyturnConnectionError'
  }
}

/** Why an offline token validation failed. A closed union: switch on it. */
export type LicenseTokenErrorCode =
  | 'malformed'
  | 'invalid_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'product_mismatch'
  | 'unsupported_algorithm'
  | 'fingerprint_mismatch'
  | 'entitlements_missing'

/** An offline validation failed: the token is not to be trusted. */
export class LicenseTokenError extends Error {
  readonly code: LicenseTokenErrorCode

  constructor(code: LicenseTokenErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'LicenseTokenError'
    this.code = code
  }
}

/** Why a signed answer was refused. A closed union: switch on it. */
export type KeyturnSignatureErrorCode =
  | 'unsigned'
  | 'malformed'
  | 'unknown_key'
  | 'invalid_signature'
  | 'digest_mismatch'
  | 'nonce_mismatch'
  | 'stale'

/**
 * An answer that should have been signed by the product's key was not, or not for this request: a
 * fake server, a replayed or altered answer, or a clock far off. Do not trust what it said.
 */
export class KeyturnSignatureError extends Error {
  readonly code: KeyturnSignatureErrorCode
  /**
   * `stale` only: when the server signed the answer, by its clock. The signature verified, so this
   * time is the server's; a local clock far behind it was wound back.
   */
  readonly signedAt: Date | undefined

  constructor(code: KeyturnSignatureErrorCode, message: string, signedAt?: Date) {
    super(message)
    this.name = 'KeyturnSignatureError'
    this.code = code
    this.signedAt = signedAt
  }
}

/** Why a license file was refused: the token codes, plus `unknown_key` and `decryption_failed`. */
export type LicenseFileErrorCode = LicenseTokenErrorCode | 'unknown_key' | 'decryption_failed'

/** A license file failed its offline verification: it is not to be trusted. */
export class LicenseFileError extends Error {
  readonly code: LicenseFileErrorCode

  constructor(code: LicenseFileErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'LicenseFileError'
    this.code = code
  }
}
