import { KeyturnClient } from '@keyturn/client'
import type { Command } from 'commander'
import { UsageError } from './errors.js'
import type { Io } from './io.js'

/** Where `keyturn serve` listens by default (docs/operations/configuration.md: HOST and PORT). */
export const defaultUrl = 'http://127.0.0.1:3000'

export interface ApiOptions {
  readonly url?: string
  readonly apiKey?: string
  readonly json?: boolean
}

/** An API command: its description, `--url`, `--api-key`, `--json`, and an example under `--help`. */
export function apiCommand(
  parent: Command,
  nameAndArguments: string,
  description: string,
  examples: readonly string[],
): Command {
  return parent
    .command(nameAndArguments)
    .description(description)
    .option('--url <url>', `the Keyturn server (KEYTURN_URL; default ${defaultUrl})`)
    .option('--api-key <secret>', 'an API key secret (KEYTURN_API_KEY, which keeps it out of `ps`)')
    .option('--json', "print the API's JSON instead of a table")
    .addHelpText(
      'after',
      `\n${examples.length === 1 ? 'Example' : 'Examples'}:\n${examples.map((e) => `  ${e}`).join('\n')}`,
    )
}

/** The client for an API command, from its flags or else the environment. */
export function clientFor(io: Io, options: ApiOptions, fetch?: typeof globalThis.fetch): KeyturnClient {
  const baseUrl = options.url ?? nonEmpty(io.env.KEYTURN_URL) ?? defaultUrl
  const apiKey = options.apiKey ?? nonEmpty(io.env.KEYTURN_API_KEY)
  if (apiKey === undefined) {
    throw new UsageError('no API key: pass --api-key or set KEYTURN_API_KEY')
  }
  if (!/^https?:\/\/[^/]/.test(baseUrl)) {
    throw new UsageError(`--url must be an http:// or https:// address, not "${baseUrl}"`)
  }
  return new KeyturnClient({ baseUrl, apiKey, ...(fetch === undefined ? {} : { fetch }) })
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}
