/** What commands may touch of the process, handed down from main.ts (the only file that touches `process`). */
export interface Io {
  readonly env: Readonly<Record<string, string | undefined>>
  print(line: string): void
  /** Resolves on the first SIGTERM or SIGINT. */
  untilShutdown(): Promise<void>
}
