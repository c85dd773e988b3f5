import { createRequire } from 'node:module'
import { Command, CommanderError } from 'commander'
import { registerServe } from './commands/serve.js'
import { CommandFailed, UsageError } from './errors.js'
import type { Io } from './io.js'

/** From packages/cli/package.json: one directory up from src/ (tsx) and from dist/ alike. */
const { version } = createRequire(import.meta.url)('../package.json') as { version: string }

/**
 * Runs `keyturn <args>` (the arguments after the program's name) with `io` as its only way out, and
 * resolves to the exit code (docs/guides/cli.md); it never exits the process. main.ts runs it on
 * the process's own streams; tests run it in-process (testing/keyturn-in-process.ts).
 */
export async function runKeyturn(args: readonly string[], io: Io): Promise<number> {
  const program = await keyturnProgram(io, args[0] === 'serve' ? 'serve' : 'all')
  try {
    await program.parseAsync([...args], { from: 'user' })
    return 0
  } catch (error) {
    return await exitCodeFor(error, io)
  }
}

/**
 * A new `keyturn` program (commander keeps the parsed options on it: one per run). For `keyturn
 * serve` it holds that one command: a server process then never loads the API client and the other
 * commands (about 4 MB of live heap; docs/decisions/0025-memory-heap-limits.md).
 */
async function keyturnProgram(io: Io, commands: 'serve' | 'all'): Promise<Command> {
  const program = new Command('keyturn')
    .description('Keyturn: self-hostable software licensing')
    .version(version, '-V, --version', 'print the version of keyturn')
    .addHelpText(
      'after',
      `
API commands take --url and --api-key, or KEYTURN_URL and KEYTURN_API_KEY, and --json for the API's JSON.
Dates (--expiration-date): ISO 8601 with a time zone (2031-01-01T12:00:00Z), or a plain date
(2031-01-01) meaning the end of that day in UTC (2031-01-01T23:59:59.999Z).
Exit codes: 0 done, 1 refused by the API or not valid, 2 usage error, 3 cannot reach the server.

Example:
  export KEYTURN_URL=http://127.0.0.1:3000 KEYTURN_API_KEY=kt_admin_…
  keyturn licenses create --product prd_3kTMd9qA8xYb2VnLr5sPwZ --max-activations 3`,
    )
  registerServe(program, io)
  if (commands === 'all') {
    const { registerOtherCommands } = await import('./other-commands.js')
    registerOtherCommands(program, io)
  }
  // Commander writes help, the version and its errors to io's streams and throws instead of exiting.
  // Subcommands inherit these only when they are set before they are added: set them on all.
  const output = {
    writeOut: (text: string) => io.stdout.write(text),
    writeErr: (text: string) => io.stderr.write(text),
    getOutHelpWidth: () => columnsOf(io.stdout),
    getErrHelpWidth: () => columnsOf(io.stderr),
    getOutHasColors: () => hasColors(io, io.stdout),
    getErrHasColors: () => hasColors(io, io.stderr),
  }
  for (const command of [program, ...allCommands(program)]) {
    command
      .exitOverride()
      .configureOutput(output)
      .showHelpAfterError('(add --help for the options and an example)')
  }
  return program
}

type MaybeTerminal = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; hasColors?(): boolean }

/** A terminal's width; commander's default of 80 elsewhere. */
function columnsOf(stream: MaybeTerminal): number {
  return (stream.isTTY === true ? stream.columns : undefined) ?? 80
}

/** As commander decides by default (NO_COLOR, FORCE_COLOR), for the given stream. */
function hasColors(io: Io, stream: MaybeTerminal): boolean {
  const env = io.env
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') {
    return false
  }
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) {
    return true
  }
  return stream.isTTY === true && stream.hasColors?.() === true
}

/** Says what went wrong on stderr and picks the exit code (docs/guides/cli.md). */
async function exitCodeFor(error: unknown, io: Io): Promise<number> {
  const { KeyturnApiError, KeyturnConnectionError } = await import('@keyturn/client')
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
