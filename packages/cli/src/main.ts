#!/usr/bin/env node
import type { Io } from './io.js'

// `keyturn serve` runs with V8's heap bounded by command-line flags (KEYTURN_HEAP_SEMI_SPACE_MB,
// KEYTURN_HEAP_GROWTH_PERCENT: packages/server/src/entry/heap-flags.ts). Started without them (`keyturn
// serve`, `npm start`, a container, systemd), this process replaces itself with one that has them,
// before the CLI's and the server's modules load. Where the platform cannot replace a process
// (Windows), it serves with V8's own sizing.
if (process.argv[2] === 'serve') {
  const { heapFlagsFor, missingHeapFlags } = await import('@keyturn/server/heap-flags')
  const missing = missingHeapFlags(heapFlagsFor(process.env), process.execArgv)
  // process.execve: Node ≥ 22.15 on POSIX systems (not yet in the @types/node this builds with).
  const replaceable = process as { execve?: (file: string, args: string[]) => never }
  if (missing.length > 0 && replaceable.execve !== undefined) {
    replaceable.execve(process.execPath, [
      process.execPath,
      ...missing,
      ...process.execArgv,
      ...process.argv.slice(1),
    ])
  }
}
const { runKeyturn } = await import('./run.js')

const io: Io = {
  env: process.env,
  print: (line) => {
    process.stdout.write(`${line}\n`)
  },
  printError: (line) => {
    process.stderr.write(`${line}\n`)
  },
  stdout: process.stdout,
  stderr: process.stderr,
  logs: process.stdout,
  untilShutdown: () =>
    new Promise((resolve) => {
      process.once('SIGTERM', () => resolve())
      process.once('SIGINT', () => resolve())
    }),
}

// A reader that stops early (`keyturn licenses export | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  process.exit(error.code === 'EPIPE' ? 0 : 1)
})

const code = await runKeyturn(process.argv.slice(2), io)
if (code !== 0) {
  process.exit(code)
}
