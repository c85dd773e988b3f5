#!/usr/bin/env node
import type { Io } from './io.js'

// `keyturn serve`: V8's young generation is held small before the CLI's and the server's modules
// load, which would grow it to 16–32 MB; serve then lets it grow to KEYTURN_HEAP_SEMI_SPACE_MB
// (packages/server/src/core/heap-limits.ts). Hence run.js loads after this.
if (process.argv[2] === 'serve') {
  const { holdYoungGeneration } = await import('@keyturn/server/heap-limits')
  holdYoungGeneration()
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
