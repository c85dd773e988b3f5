/** The command line was wrong (a flag, an argument, a file's format): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/**
 * The command ran, and its answer is "no": an invalid license or token, rows an import could not
 * create. Whatever needed saying is already printed; `message`, if any, goes to stderr.
 */
export class CommandFailed extends Error {
  readonly exitCode: number
  constructor(message = '', exitCode = 1) {
    super(message)
    this.name = 'CommandFailed'
    this.exitCode = exitCode
  }
}
