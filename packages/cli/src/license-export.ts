import { once } from 'node:events'
import { open } from 'node:fs/promises'
import type { CustomerId } from '@keyturn/protocol'
import { ListLicensesQuerySchema, maxPageLimit } from '@keyturn/protocol'
import { type ApiOptions, clientFor } from './api.js'
import { checked, defined } from './checks.js'
import { UsageError } from './errors.js'
import type { Io } from './io.js'
import { csvHeader, csvLine, type ExportedLicense } from './license-csv.js'
import { printJson } from './output.js'

export interface ExportOptions extends ApiOptions {
  readonly product?: string
  readonly format: string
  readonly out?: string
}

const formats = {
  csv: { header: csvHeader, line: csvLine },
  jsonl: { header: () => '', line: (license: ExportedLicense) => `${JSON.stringify(license)}\n` },
} as const

/**
 * Streams every matching license, page after page (`starting_after`, so licenses created meanwhile
 * never shift a page), to stdout or `--out`; holds one page in memory at a time.
 */
export async function exportLicenses(io: Io, options: ExportOptions): Promise<void> {
  const format = options.format === 'csv' || options.format === 'jsonl' ? formats[options.format] : undefined
  if (format === undefined) {
    throw new UsageError(`--format must be csv or jsonl, not "${options.format}"`)
  }
  const query = checked(
    ListLicensesQuerySchema,
    defined({ productId: options.product, limit: maxPageLimit, sort: 'createdAt:asc' }),
    { productId: '--product' },
  )
  const client = clientFor(io, options)
  const handle =
    options.out === undefined
      ? undefined
      : await open(options.out, 'w').catch((error: unknown) => {
          throw new UsageError(
            `cannot write ${options.out}: ${error instanceof Error ? error.message : error}`,
          )
        })
  const file = handle?.createWriteStream()
  const out = file ?? io.stdout
  const write = async (text: string) => {
    if (!out.write(text)) {
      await once(out, 'drain')
    }
  }
  // Each customer's email, read once: licenses of one customer usually come together.
  const emails = new Map<CustomerId, Promise<string | null>>()
  const emailOf = (id: CustomerId | null): Promise<string | null> => {
    if (id === null) {
      return Promise.resolve(null)
    }
    let email = emails.get(id)
    if (email === undefined) {
      email = client.getCustomer(id).then((customer) => customer.email)
      emails.set(id, email)
    }
    return email
  }
  let count = 0
  try {
    await write(format.header())
    for await (const license of client.iterateLicenses(query)) {
      await write(format.line({ ...license, customerEmail: await emailOf(license.customerId) }))
      count++
    }
  } finally {
    if (file !== undefined) {
      file.end()
      await once(file, 'close')
    }
  }
  if (options.out === undefined) {
    return // stdout holds the licenses, and nothing else
  }
  if (options.json === true) {
    printJson(io, { exported: count, format: options.format, out: options.out })
  } else {
    io.print(`Exported ${count} licenses to ${options.out}.`)
  }
}
