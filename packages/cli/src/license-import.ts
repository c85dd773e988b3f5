/**
 * @module `keyturn licenses import`: creates a license per row of a CSV or JSON Lines file, a few
 * requests at a time. Each row is sent with an Idempotency-Key made of the product, the file's
 * SHA-256 and the row's line (or the row's externalId), so a second run after an interruption, or
 * of the same file by mistake, creates nothing twice: the server replays what it already did.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'
import { KeyturnApiError, KeyturnConnectionError, type LicenseResource } from '@keyturn/client'
import {
  type CreateLicenseBody,
  CreateLicenseBodySchema,
  CustomerEmailSchema,
  type CustomerId,
  ProductIdSchema,
} from '@keyturn/protocol'
import { SingleBar } from 'cli-progress'
import { parse } from 'csv-parse/sync'
import { Check } from 'typebox/value'
import { type ApiOptions, clientFor } from './api.js'
import { describeProblems, integer } from './checks.js'
import { CommandFailed, UsageError } from './errors.js'
import type { Io } from './io.js'
import { printJson } from './output.js'

export interface ImportOptions extends ApiOptions {
  readonly product?: string
  readonly format?: string
  readonly concurrency: string
}

/** Fields a row may set. */
const bodyFields = [
  'productId',
  'maxActivations',
  'expirationDate',
  'heartbeatTtl',
  'maxUses',
  'customerId',
  'policyId',
  'entitlements',
  'metadata',
] as const
/** Fields `licenses export` writes that a new license cannot take: accepted, and ignored. */
const ignoredFields = new Set([
  'id',
  'object',
  'key',
  'status',
  'statusDetails',
  'activationCount',
  'uses',
  'usesResetAt',
  'createdAt',
  'updatedAt',
])
const knownFields = new Set<string>([...bodyFields, 'externalId', 'customerEmail', ...ignoredFields])
/** A CSV column `metadata.<key>` sets one metadata key (as text). */
const metadataColumn = /^metadata\.([A-Za-z0-9_.-]{1,40})$/
const isKnownField = (field: string) => knownFields.has(field) || metadataColumn.test(field)
const maxExternalIdLength = 150
const maxConcurrency = 64

/** A row as read from the file: its fields (CSV text or JSON values), or why it could not be read. */
type RawRow = { readonly line: number; readonly fields: Readonly<Record<string, unknown>> } | Problem
interface Problem {
  readonly line: number
  readonly problem: string
}

interface Request {
  readonly line: number
  readonly body: CreateLicenseBody
  readonly idempotencyKey: string
  /** Found or created as the license's customer before the license is sent. */
  readonly customerEmail?: string
}

type Outcome =
  | { readonly line: number; readonly kind: 'created' | 'existing'; readonly license: LicenseResource }
  | {
      readonly line: number
      readonly kind: 'failed'
      readonly code?: string
      readonly detail: string
      readonly requestId?: string
    }

export async function importLicenses(io: Io, file: string, options: ImportOptions): Promise<void> {
  const format = formatOf(file, options.format)
  const concurrency = Number(integer(options.concurrency))
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > maxConcurrency) {
    throw new UsageError(`--concurrency must be an integer from 1 to ${maxConcurrency}`)
  }
  if (options.product !== undefined && !Check(ProductIdSchema, options.product)) {
    throw new UsageError(`--product must be a product id (prd_…), not "${options.product}"`)
  }
  clientFor(io, options) // without an API key, stop before reading the file
  const content = await readFile(file).catch((error: unknown) => {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : error}`)
  })
  const fileHash = createHash('sha256').update(content).digest('hex').slice(0, 32)
  const rows = format === 'csv' ? readCsv(content.toString('utf8')) : readJsonLines(content.toString('utf8'))

  const outcomes: Outcome[] = []
  const requests: Request[] = []
  for (const row of rows) {
    const prepared = 'problem' in row ? row : toRequest(row, options.product, fileHash)
    if ('problem' in prepared) {
      outcomes.push({ line: prepared.line, kind: 'failed', detail: prepared.problem })
    } else {
      requests.push(prepared)
    }
  }

  const bar = io.stderr.isTTY
    ? new SingleBar({
        stream: io.stderr,
        format: 'Importing {bar} {value}/{total} rows | {failed} failed | {eta_formatted} left',
        hideCursor: true,
        clearOnComplete: true,
      })
    : undefined
  bar?.start(rows.length, outcomes.length, { failed: outcomes.length })
  const failedSoFar = () => outcomes.filter((outcome) => outcome.kind === 'failed').length
  let next = 0
  let unreachable: KeyturnConnectionError | undefined
  const customerId = customerFinder(io, options)
  const worker = async () => {
    for (
      let request = requests[next++];
      request !== undefined && unreachable === undefined;
      request = requests[next++]
    ) {
      try {
        outcomes.push(await send(io, options, request, customerId))
      } catch (error) {
        if (!(error instanceof KeyturnConnectionError)) {
          throw error
        }
        unreachable ??= error
      }
      bar?.increment(1, { failed: failedSoFar() })
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, worker))
  } finally {
    bar?.stop()
  }
  if (unreachable !== undefined) {
    throw new KeyturnConnectionError(
      `${unreachable.message}; ${outcomes.length} of ${rows.length} rows were done: run the same import again to finish it`,
      { cause: unreachable },
    )
  }
  report(io, file, rows.length, outcomes, options.json === true)
}

function formatOf(file: string, format: string | undefined): 'csv' | 'jsonl' {
  const chosen =
    format ?? (/\.csv$/i.test(file) ? 'csv' : /\.(jsonl|ndjson)$/i.test(file) ? 'jsonl' : undefined)
  if (chosen === 'csv' || chosen === 'jsonl') {
    return chosen
  }
  throw new UsageError(
    format === undefined
      ? `cannot tell the format of ${file} from its name: pass --format csv or --format jsonl`
      : `--format must be csv or jsonl, not "${format}"`,
  )
}

/** CSV with a header line. A record that cannot be read (a wrong number of cells) is a row problem. */
function readCsv(text: string): RawRow[] {
  const problems: Problem[] = []
  const records = parse(text, {
    columns: (header: string[]) => {
      const unknown = header.filter((column) => !isKnownField(column))
      if (unknown.length > 0) {
        throw new UsageError(
          `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: the columns are productId, maxActivations, expirationDate, heartbeatTtl, maxUses, customerEmail, customerId, policyId, entitlements, metadata (or metadata.<key>) and externalId`,
        )
      }
      return header
    },
    bom: true,
    trim: true,
    info: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_skip: (error) => {
      const line = typeof error?.lines === 'number' ? error.lines : 0 // csv-parse adds its context to the error
      problems.push({ line, problem: error?.message ?? 'the record cannot be read' })
    },
  }) as { record: Record<string, string>; info: { lines: number } }[] // columns: true gives objects of cells
  const rows: RawRow[] = records.map(({ record, info }) => ({
    line: info.lines,
    fields: fromCsvCells(record),
  }))
  return [...rows, ...problems].sort((a, b) => a.line - b.line)
}

/**
 * CSV cells are text: empty is "not given", `null` is null, a maxActivations, heartbeatTtl or
 * maxUses of digits a number,
 * `entitlements` codes separated by spaces, `metadata` a JSON object, `metadata.<key>` one key's text.
 */
function fromCsvCells(record: Readonly<Record<string, string>>): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  const metadata: Record<string, unknown> = {}
  for (const [column, text] of Object.entries(record)) {
    const key = metadataColumn.exec(column)?.[1]
    if (text === '') {
      continue
    }
    if (key !== undefined) {
      metadata[key] = text
    } else if (text === 'null') {
      fields[column] = null
    } else if (column === 'maxActivations' || column === 'heartbeatTtl' || column === 'maxUses') {
      fields[column] = integer(text)
    } else if (column === 'entitlements') {
      fields[column] = text.split(/\s+/).filter((code) => code !== '')
    } else if (column === 'metadata') {
      fields[column] = parseJsonCell(text)
    } else {
      fields[column] = text
    }
  }
  if (Object.keys(metadata).length > 0) {
    fields.metadata = { ...(typeof fields.metadata === 'object' ? fields.metadata : {}), ...metadata }
  }
  return fields
}

/** A JSON cell as its value, or as the text itself (the schema check then names the field). */
function parseJsonCell(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function readJsonLines(text: string): RawRow[] {
  return text.split(/\r?\n/).flatMap((source, index): RawRow[] => {
    const line = index + 1
    if (source.trim() === '') {
      return []
    }
    let value: unknown
    try {
      value = JSON.parse(source)
    } catch {
      return [{ line, problem: 'not a JSON value' }]
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return [{ line, problem: 'not a JSON object' }]
    }
    const unknown = Object.keys(value).filter((field) => !knownFields.has(field))
    if (unknown.length > 0) {
      return [{ line, problem: `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}` }]
    }
    return [{ line, fields: { ...value } }]
  })
}

function toRequest(
  row: { readonly line: number; readonly fields: Readonly<Record<string, unknown>> },
  product: string | undefined,
  fileHash: string,
): Request | Problem {
  const { line, fields } = row
  const body = Object.fromEntries(
    bodyFields.flatMap((field) => (fields[field] === undefined ? [] : [[field, fields[field]]])),
  )
  if (product !== undefined) {
    body.productId = product
  }
  const { customerEmail } = fields
  if (customerEmail !== undefined && customerEmail !== null) {
    if (!Check(CustomerEmailSchema, customerEmail)) {
      return { line, problem: `customerEmail must be an email address, not ${JSON.stringify(customerEmail)}` }
    }
    if (body.customerId !== undefined && body.customerId !== null) {
      // An export carries both: the email wins, so licenses move to the new server's customer.
      delete body.customerId
    }
  }
  if (!Check(CreateLicenseBodySchema, body)) {
    const problems = describeProblems(CreateLicenseBodySchema, body)
    return { line, problem: problems.join('; ') }
  }
  const customer = typeof customerEmail === 'string' ? { customerEmail } : {}
  const { externalId } = fields
  if (externalId === undefined || externalId === null) {
    return { line, body, ...customer, idempotencyKey: `keyturn-import:${body.productId}:${fileHash}:${line}` }
  }
  if (typeof externalId !== 'string' || externalId.length > maxExternalIdLength) {
    return { line, problem: `externalId must be text of at most ${maxExternalIdLength} characters` }
  }
  return { line, body, ...customer, idempotencyKey: `keyturn-import:${body.productId}:id:${externalId}` }
}

/**
 * Finds the customer with this email, or creates one: once per email per run (concurrent rows of the
 * same customer share the lookup). A product key sees only customers owning its licenses, so an
 * email of a customer it cannot see fails the row (409 customer_email_taken).
 */
function customerFinder(io: Io, options: ApiOptions): (email: string) => Promise<CustomerId> {
  const client = clientFor(io, options)
  const found = new Map<string, Promise<CustomerId>>()
  const find = async (email: string): Promise<CustomerId> => {
    const lookup = async () =>
      (await client.listCustomers({ filter: `email:eq:${email}`, limit: 1 })).data[0]?.id
    const existing = await lookup()
    if (existing !== undefined) {
      return existing
    }
    try {
      return (await client.createCustomer({ email })).id
    } catch (error) {
      const again =
        error instanceof KeyturnApiError && error.code === 'customer_email_taken' ? await lookup() : undefined
      if (again === undefined) {
        throw error
      }
      return again
    }
  }
  return (email) => {
    const key = email.toLowerCase()
    let id = found.get(key)
    if (id === undefined) {
      id = find(email)
      found.set(key, id)
    }
    return id
  }
}

/** How long to wait for a row the server is still creating (a run that was interrupted sent it). */
const inProgressRetries = [100, 200, 400, 800, 1600, 3200, 6400]

async function send(
  io: Io,
  options: ApiOptions,
  request: Request,
  customerId: (email: string) => Promise<CustomerId>,
): Promise<Outcome> {
  let replayed = false
  // The client takes a fetch: this one notes whether the answer is a replay of an earlier run's.
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init)
    replayed = response.headers.get('idempotent-replayed') === 'true'
    return response
  }
  const client = clientFor(io, options, fetch)
  for (let attempt = 0; ; attempt++) {
    try {
      const body =
        request.customerEmail === undefined
          ? request.body
          : { ...request.body, customerId: await customerId(request.customerEmail) }
      const license = await client.createLicense(body, { idempotencyKey: request.idempotencyKey })
      return { line: request.line, kind: replayed ? 'existing' : 'created', license }
    } catch (error) {
      if (!(error instanceof KeyturnApiError)) {
        throw error
      }
      const wait = inProgressRetries[attempt]
      if (error.code === 'idempotency_key_in_progress' && wait !== undefined) {
        await delay(wait)
        continue
      }
      return {
        line: request.line,
        kind: 'failed',
        code: error.code,
        detail: error.detail,
        ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
      }
    }
  }
}

function report(io: Io, file: string, rows: number, outcomes: readonly Outcome[], json: boolean): void {
  const sorted = [...outcomes].sort((a, b) => a.line - b.line)
  const failures = sorted.filter((outcome) => outcome.kind === 'failed')
  for (const failure of failures) {
    const refusal = failure.code === undefined ? '' : `${failure.code}: `
    const requestId = failure.requestId === undefined ? '' : ` (${failure.requestId})`
    io.printError(`line ${failure.line}: ${refusal}${failure.detail}${requestId}`)
  }
  const created = sorted.filter((outcome) => outcome.kind === 'created').length
  const existing = sorted.filter((outcome) => outcome.kind === 'existing').length
  if (json) {
    printJson(io, {
      file,
      rows,
      created,
      alreadyImported: existing,
      failed: failures.length,
      licenses: sorted.flatMap((outcome) =>
        outcome.kind === 'failed'
          ? []
          : [{ line: outcome.line, id: outcome.license.id, key: outcome.license.key }],
      ),
      failures,
    })
  } else {
    const already = existing === 0 ? '' : ` (${existing} of them by an earlier run)`
    const failed = failures.length === 0 ? '' : `; ${failures.length} failed (listed on stderr)`
    io.print(`Imported ${created + existing} of ${rows} rows${already}${failed}.`)
  }
  if (failures.length > 0) {
    throw new CommandFailed()
  }
}
