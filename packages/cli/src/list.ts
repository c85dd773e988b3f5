import type { Paginated } from '@keyturn/client'
import type { Command } from 'commander'
import type { Static, TSchema } from 'typebox'
import { checked, defined, integer } from './checks.js'
import { UsageError } from './errors.js'
import type { Io } from './io.js'
import { printJson, printTable } from './output.js'

export interface ListOptions {
  readonly filter?: string
  readonly sort?: string
  readonly limit?: string
  readonly page?: string
  readonly all?: boolean
  readonly json?: boolean
}

/** `--filter`, `--sort`, `--limit`, `--page` and `--all`, as every list operation takes them. */
export function withListOptions(command: Command): Command {
  return command
    .option('--filter <rules>', 'field:operator:value rules joined by "," (e.g. status:eq:active)')
    .option('--sort <field:order>', 'e.g. createdAt:desc (the default)')
    .option('--limit <n>', 'items per page, 1 to 100 (default 30)')
    .option('--page <n>', 'page number, from 0')
    .option('--all', 'every page, one after the other')
}

interface Listing<T, S extends TSchema> {
  readonly options: ListOptions
  /** The query's schema: a flag the API would refuse is a usage error before any request. */
  readonly schema: S
  /** Query fields beyond the list options (`productId`). */
  readonly extra?: Readonly<Record<string, string | undefined>>
  readonly page: (query: Static<S>) => Promise<Paginated<T>>
  readonly iterate: (query: Static<S>) => AsyncIterable<T>
  readonly noun: string
  readonly headers: readonly string[]
  readonly row: (item: T) => readonly (string | number | boolean | null | undefined)[]
}

/** Prints one page (or, with `--all`, every page): a table with a footer, or the API's JSON. */
export async function printList<T, S extends TSchema>(io: Io, listing: Listing<T, S>): Promise<void> {
  const { options } = listing
  if (options.all === true && options.page !== undefined) {
    throw new UsageError('--all walks every page: leave out --page')
  }
  const query = checked(
    listing.schema,
    defined({
      ...listing.extra,
      filter: options.filter,
      sort: options.sort,
      limit: options.limit === undefined ? undefined : integer(options.limit),
      page: options.page === undefined ? undefined : integer(options.page),
    }),
    { filter: '--filter', sort: '--sort', limit: '--limit', page: '--page', productId: '--product' },
  )
  if (options.all === true) {
    const items: T[] = []
    for await (const item of listing.iterate(query)) {
      items.push(item)
    }
    if (options.json === true) {
      printJson(io, items)
    } else if (items.length === 0) {
      io.print(`No ${listing.noun}.`)
    } else {
      printTable(io, listing.headers, items.map(listing.row))
    }
    return
  }
  const page = await listing.page(query)
  if (options.json === true) {
    printJson(io, page)
    return
  }
  if (page.data.length === 0) {
    io.print(
      page.totalCount === 0
        ? `No ${listing.noun}.`
        : `No ${listing.noun} on page ${page.page} (${page.totalCount} in all).`,
    )
    return
  }
  printTable(io, listing.headers, page.data.map(listing.row))
  if (page.totalPages > 1) {
    const next = page.hasNextPage ? ` Next: --page ${page.nextPage}, or --all for every page.` : ''
    io.print(
      `\nPage ${page.page} of pages 0 to ${page.totalPages - 1}: ${page.data.length} of ${page.totalCount} ${listing.noun}.${next}`,
    )
  }
}
