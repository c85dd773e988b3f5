import type { Command } from 'commander'
import { type ApiOptions, apiCommand, clientFor } from '../api.js'
import type { Io } from '../io.js'
import { printJson, printTable } from '../output.js'

/** `keyturn search <query>`: the dashboard's search box from a terminal (admin or product key). */
export function registerSearch(program: Command, io: Io): void {
  apiCommand(
    program,
    'search <query>',
    'Find licenses, customers and machines by key, email, name prefix, fingerprint or id',
    ['keyturn search ada@example.com', 'keyturn search 7k3qdm9xtb2vhcr8pnwf4zj6a'],
  ).action(async (query: string, options: ApiOptions) => {
    const result = await clientFor(io, options).search(query)
    if (options.json === true) {
      printJson(io, result)
      return
    }
    if (result.data.length === 0) {
      io.print('Nothing found.')
      return
    }
    printTable(
      io,
      ['object', 'id', 'title', 'subtitle', 'matched'],
      result.data.map((hit) => [hit.object, hit.id, hit.title, hit.subtitle, hit.matched]),
    )
  })
}
