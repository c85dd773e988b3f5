import type { ErrorCode, FieldError } from '@keyturn/protocol'

/** An expected failure the caller can act on; the HTTP layer maps `code` to a problem (http/problems.ts). */
export class DomainError extends Error {
  readonly code: ErrorCode
  readonly fieldErrors: FieldError[] | undefined
  /** Extra members for the problem body (for example a limit and a count). */
  readonly extensions: Record<string, unknown> | undefined

  constructor(
    code: ErrorCode,
    message: string,
    options: { fieldErrors?: FieldError[]; extensions?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause })
    this.name = 'DomainError'
    this.code = code
    this.fieldErrors = options.fieldErrors
    this.extensions = options.extensions
  }
}

/** A request that passed the schema but breaks a rule needing the clock or the database. */
export class InvalidInputError extends DomainError {
  constructor(pointer: string, detail: string) {
    super('validation_failed', detail, { fieldErrors: [{ pointer, detail }] })
    this.name = 'InvalidInputError'
  }
}
