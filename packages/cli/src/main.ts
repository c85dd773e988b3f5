#!/usr/bin/env node
import type { Io } from './io.js'

// `keyturn serve`: V8's heap is held before the CLI's and the server's modules load, which would
// grow the young generation to 16–32 MB and leave the old generation a limit of 4× what they keep;
// serve then applies KEYTURN_HEAP_SEMI_SPACE_MB and KEYTURN_HEAP_GROWTH_PERCENT
// (packages/server/src/core/heap-limits.ts). Hence run.js loads after this.
if (process.argv[2] === 'serve') {
  const { holdHeapWhileLoading } = await import('@keyturn/server/heap-limits')
  holdHeapWhileLoading()
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
