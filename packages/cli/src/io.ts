/** What commands may touch of the process, handed down from main.ts (the only file that touches `process`). */
export interface Io {
  readonly env: Readonly<Record<string, string | undefined>>
  print(line: string): void
  /** The stream `print` writes to, for the server's log lines: one stream keeps their order. */
  readonly logs: { write(text: string): void }
  /** Resolves on the first SIGTERM or SIGINT. */
  untilShutdown(): Promise<void>
}
