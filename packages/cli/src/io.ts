/**
 * What commands may touch of the process, handed down from main.ts (the only file that touches
 * `process`), or from a test running the CLI in-process (testing/keyturn-in-process.ts).
 */
export interface Io {
  readonly env: Readonly<Record<string, string | undefined>>
  /** Writes a line of results to stdout. */
  print(line: string): void
  /** Writes a line to stderr: errors, and the rows an import could not create. */
  printError(line: string): void
  /** stdout as a stream, for output written in pieces (export): respect `write`'s backpressure. */
  readonly stdout: NodeJS.WritableStream
  /** stderr as a stream, for progress bars: drawn only when it is a terminal. */
  readonly stderr: NodeJS.WritableStream & { readonly isTTY?: boolean }
  /** The stream `print` writes to, for the server's log lines: one stream keeps their order. */
  readonly logs: { write(text: string): void }
  /** Resolves on the first SIGTERM or SIGINT. */
  untilShutdown(): Promise<void>
}
