#!/usr/bin/env node
import { Command, CommanderError } from 'commander'
import { registerMigrate } from './commands/migrate.js'
import { registerServe } from './commands/serve.js'
import type { Io } from './io.js'

const io: Io = {
  env: process.env,
  print: (line) => {
    process.stdout.write(`${line}\n`)
  },
  logs: process.stdout,
  untilShutdown: () =>
    new Promise((resolve) => {
      process.once('SIGTERM', () => resolve())
      process.once('SIGINT', () => resolve())
    }),
}

const program = new Command('keyturn')
  .description('Keyturn: self-hostable software licensing')
  .exitOverride()
  .showHelpAfterError()
registerServe(program, io)
registerMigrate(program, io)

try {
  await program.parseAsync(process.argv)
} catch (error) {
  if (error instanceof CommanderError) {
    process.exit(error.exitCode === 0 ? 0 : 2)
  }
  // Configuration problems are listed in the message; anything else is unexpected.
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
