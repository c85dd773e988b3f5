#!/usr/bin/env node
import { createRequire } from 'node:module'
import { KeyturnApiError, KeyturnConnectionError } from '@keyturn/client'
import { Command, CommanderError } from 'commander'
import { registerActivations } from './commands/activations.js'
import { registerApiKeys } from './commands/api-keys.js'
import { registerBackup } from './commands/backup.js'
import { registerCustomers } from './commands/customers.js'
import { registerEntitlements } from './commands/entitlements.js'
import { registerEvents } from './commands/events.js'
import { registerLicenses } from './commands/licenses.js'
import { registerMigrate } from './commands/migrate.js'
import { registerPolicies } from './commands/policies.js'
import { registerProducts } from './commands/products.js'
import { registerServe } from './commands/serve.js'
import { registerToken } from './commands/token.js'
import { registerWebhooks } from './commands/webhooks.js'
import { CommandFailed, UsageError } from './errors.js'
import type { Io } from './io.js'

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

/** From packages/cli/package.json: one directory up from src/ (tsx) and from dist/ alike. */
const { version } = createRequire(import.meta.url)('../package.json') as { version: string }

const program = new Command('keyturn')
  .description('Keyturn: self-hostable software licensing')
  .version(version, '-V, --version', 'print the version of keyturn')
  .exitOverride()
  .addHelpText(
    'after',
    `
API commands take --url and --api-key, or KEYTURN_URL and KEYTURN_API_KEY, and --json for the API's JSON.
Dates (--expiration-date): ISO 8601 with a time zone (2031-01-01T12:00:00Z), or a plain date
(2031-01-01) meaning 00:00:00 UTC that day.
Exit codes: 0 done, 1 refused by the API or not valid, 2 usage error, 3 cannot reach the server.

Example:
  export KEYTURN_URL=http://127.0.0.1:3000 KEYTURN_API_KEY=kt_admin_…
  keyturn licenses create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --max-activations 3`,
  )
registerServe(program, io)
registerMigrate(program, io)
registerBackup(program, io)
registerProducts(program, io)
registerApiKeys(program, io)
registerLicenses(program, io)
registerActivations(program, io)
registerCustomers(program, io)
registerEntitlements(program, io)
registerPolicies(program, io)
registerToken(program, io)
registerEvents(program, io)
registerWebhooks(program, io)
// Subcommands inherit exitOverride only when it is set before they are added: set it on all.
for (const command of [program, ...allCommands(program)]) {
  command.exitOverride().showHelpAfterError('(add --help for the options and an example)')
}

try {
  await program.parseAsync(process.argv)
} catch (error) {
  process.exit(exitCodeFor(error))
}

/** Says what went wrong on stderr and picks the exit code (README "Command line"). */
function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    return error.exitCode === 0 ? 0 : 2 // commander printed the problem (or the help)
  }
  if (error instanceof UsageError) {
    io.printError(`error: ${error.message}`)
    return 2
  }
  if (error instanceof KeyturnApiError) {
    io.printError(`${error.code}: ${error.detail}${error.requestId ? ` (${error.requestId})` : ''}`)
    return 1
  }
  if (error instanceof KeyturnConnectionError) {
    io.printError(`cannot reach the server: ${error.message}`)
    return 3
  }
  if (error instanceof CommandFailed) {
    if (error.message !== '') {
      io.printError(error.message)
    }
    return error.exitCode
  }
  // serve and migrate: configuration problems are listed in the message; anything else is unexpected.
  io.printError(error instanceof Error ? error.message : String(error))
  return 1
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((sub) => [sub, ...allCommands(sub)])
}
