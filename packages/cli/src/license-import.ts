/**
 * @module `keyturn licenses import`: sends the rows of a CSV or JSON Lines file to the server's batch
 * import (`POST /licenses/import`, admin keys), a few batches at a time. Each batch carries an
 * Idempotency-Key made of its rows' content, and the server knows each row again by its externalId
 * (or key): a second run after an interruption, or of the same file by mistake, creates nothing twice.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { setTimeout as delay } from 'node:timers/promises'
import { KeyturnApiError, KeyturnConnectionError } from '@keyturn/client'
import {
  CustomerEmailSchema,
  type ImportLicenseRow,
  ImportLicenseRowSchema,
  type ImportLicensesResult,
  maxImportRows,
  type PolicyId,
  PolicyIdSchema,
  type ProductId,
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
  /** `pol_old=pol_new,pol_other=none`: policies of the file replaced by the target product's. */
  readonly policyMap?: string
  /** Each row's `key` becomes its license's key (keys from another licensing system). */
  readonly keepKeys?: boolean
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
  'externalId',
  'customerEmail',
  'status',
] as const
/** Read only with --keep-keys (a move from another system). */
const movedFields = ['key', 'uses', 'activations'] as const
/** Fields `licenses export` writes that a new license cannot take: accepted, and ignored. */
const ignoredFields = new Set([
  'id',
  'object',
  'statusDetails',
  'activationCount',
  'usesResetAt',
  'createdAt',
  'updatedAt',
])
const knownFields = new Set<string>([...bodyFields, ...movedFields, ...ignoredFields])
/** A CSV column `metadata.<key>` sets one metadata key (as text). */
const metadataColumn = /^metadata\.([A-Za-z0-9_.-]{1,40})$/
const isKnownField = (field: string) => knownFields.has(field) || metadataColumn.test(field)
const maxConcurrency = 64
/** Rows per request; fewer when their JSON would pass batchBytes (rows with many machines). */
const batchRows = Math.min(500, maxImportRows)
/** Below the server's body limit for a batch (4 MiB). */
const batchBytes = 3 * 1024 * 1024

/** A row as read from the file: its fields (CSV text or JSON values), or why it could not be read. */
type RawRow = { readonly line: number; readonly fields: Readonly<Record<string, unknown>> } | Problem
interface Problem {
  readonly line: number
  readonly problem: string
}

interface Request {
  readonly line: number
  readonly row: ImportLicenseRow
  /** The row's policy, when --policy-map replaced it (by `row.policyId`, or by none). */
  readonly mappedFrom?: PolicyId
}

/** --policy-map: a policy of the file, and the target product's policy that replaces it (null: none). */
type PolicyMap = ReadonlyMap<string, PolicyId | null>

type Outcome =
  | {
      readonly line: number
      readonly kind: 'created' | 'existing'
      readonly license: { readonly id: string; readonly key: string }
      readonly revoked: boolean
      readonly mappedFrom?: PolicyId
      readonly policyId: PolicyId | null
    }
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
  const policyMap = parsePolicyMap(options.policyMap)
  clientFor(io, options) // without an API key, stop before reading the file
  const content = await readFile(file).catch((error: unknown) => {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : error}`)
  })
  const rows = format === 'csv' ? readCsv(content.toString('utf8')) : readJsonLines(content.toString('utf8'))
  // A row without an externalId gets one made of the file and its line: a second run is known.
  const fileId = createHash('sha256').update(content).digest('hex').slice(0, 16)

  const outcomes: Outcome[] = []
  const requests: Request[] = []
  const prepared: Request[] = []
  for (const row of rows) {
    const request =
      'problem' in row ? row : toRequest(row, options.product, fileId, policyMap, options.keepKeys === true)
    if ('problem' in request) {
      outcomes.push({ line: request.line, kind: 'failed', detail: request.problem })
    } else {
      prepared.push(request)
    }
  }
  const productOfPolicy = await policyProducts(io, options, prepared)
  for (const request of prepared) {
    const problem = policyProblem(request, productOfPolicy)
    if (problem === undefined) {
      requests.push(request)
    } else {
      outcomes.push({ line: request.line, kind: 'failed', detail: problem })
    }
  }
  const batches = batchesOf(requests)

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
  const worker = async () => {
    for (
      let batch = batches[next++];
      batch !== undefined && unreachable === undefined;
      batch = batches[next++]
    ) {
      try {
        outcomes.push(...(await send(io, options, batch)))
      } catch (error) {
        if (!(error instanceof KeyturnConnectionError)) {
          throw error
        }
        unreachable ??= error
      }
      bar?.increment(batch.length, { failed: failedSoFar() })
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker))
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

/** The rows in requests of at most batchRows rows and about batchBytes of JSON. */
function batchesOf(requests: readonly Request[]): Request[][] {
  const batches: Request[][] = []
  let batch: Request[] = []
  let bytes = 0
  for (const request of requests) {
    const size = JSON.stringify(request.row).length + 1
    if (batch.length > 0 && (batch.length >= batchRows || bytes + size > batchBytes)) {
      batches.push(batch)
      batch = []
      bytes = 0
    }
    batch.push(request)
    bytes += size
  }
  if (batch.length > 0) {
    batches.push(batch)
  }
  return batches
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
          `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: the columns are productId, maxActivations, expirationDate, heartbeatTtl, maxUses, customerEmail, customerId, policyId, entitlements, metadata (or metadata.<key>), status and externalId; with --keep-keys also key, uses and activations`,
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
    } else if (column === 'uses') {
      fields[column] = integer(text)
    } else if (column === 'metadata' || column === 'activations') {
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

/** `pol_a=pol_b,pol_c=none` as a map; a usage error for anything else. */
function parsePolicyMap(text: string | undefined): PolicyMap {
  const map = new Map<string, PolicyId | null>()
  if (text === undefined) {
    return map
  }
  for (const pair of text.split(',')) {
    const [from = '', to = '', ...rest] = pair.split('=').map((part) => part.trim())
    if (
      rest.length > 0 ||
      !Check(PolicyIdSchema, from) ||
      (to !== 'none' && !Check(PolicyIdSchema, to)) ||
      map.has(from)
    ) {
      throw new UsageError(
        `--policy-map must be old=new pairs separated by commas, each policy once (pol_a=pol_b,pol_c=none), not "${pair}"`,
      )
    }
    map.set(from, to === 'none' ? null : (to as PolicyId)) // checked just above
  }
  return map
}

const rowStatuses = new Set(['active', 'expired', 'revoked', 'suspended'])

function toRequest(
  raw: { readonly line: number; readonly fields: Readonly<Record<string, unknown>> },
  product: string | undefined,
  fileId: string,
  policyMap: PolicyMap,
  keepKeys: boolean,
): Request | Problem {
  const { line, fields } = raw
  const taken = keepKeys ? [...bodyFields, ...movedFields] : bodyFields
  const row: Record<string, unknown> = Object.fromEntries(
    taken.flatMap((field) => (fields[field] === undefined ? [] : [[field, fields[field]]])),
  )
  if (keepKeys && (fields.key === undefined || fields.key === null || fields.key === '')) {
    return { line, problem: 'key is empty: with --keep-keys every row needs its key' }
  }
  for (const field of ['key', 'uses', 'activations', 'status', 'customerEmail', 'externalId'] as const) {
    if (row[field] === null) {
      delete row[field] // as absent
    }
  }
  if (product !== undefined) {
    row.productId = product
  }
  row.externalId ??= `file:${fileId}:${line}`
  const { status } = row
  if (status !== undefined && !rowStatuses.has(String(status))) {
    return {
      line,
      problem: `status must be active, expired, revoked or suspended, not ${JSON.stringify(status)}`,
    }
  }
  if (row.customerEmail !== undefined && !Check(CustomerEmailSchema, row.customerEmail)) {
    return {
      line,
      problem: `customerEmail must be an email address, not ${JSON.stringify(row.customerEmail)}`,
    }
  }
  if (row.customerEmail !== undefined) {
    // An export carries both: the email wins, so licenses move to the new server's customer.
    delete row.customerId
  }
  let mappedFrom: PolicyId | undefined
  if (typeof row.policyId === 'string' && policyMap.has(row.policyId)) {
    mappedFrom = row.policyId as PolicyId // a key of the map: a policy id
    const to = policyMap.get(mappedFrom)
    if (to === null || to === undefined) {
      delete row.policyId
    } else {
      row.policyId = to
    }
  }
  if (!Check(ImportLicenseRowSchema, row)) {
    return { line, problem: describeProblems(ImportLicenseRowSchema, row).join('; ') }
  }
  return { line, row, ...(mappedFrom === undefined ? {} : { mappedFrom }) }
}

/**
 * The product of each policy the rows name, asked once per policy: a policy that does not exist
 * (or that this key cannot see) maps to undefined. An export of another product names that product's
 * policies, which the server would refuse row by row with less to go on.
 */
async function policyProducts(
  io: Io,
  options: ApiOptions,
  requests: readonly Request[],
): Promise<ReadonlyMap<PolicyId, ProductId | undefined>> {
  const client = clientFor(io, options)
  const ids = [
    ...new Set(requests.flatMap((request) => (request.row.policyId ? [request.row.policyId] : []))),
  ]
  const products = new Map<PolicyId, ProductId | undefined>()
  for (const id of ids) {
    try {
      products.set(id, (await client.getPolicy(id)).productId)
    } catch (error) {
      if (!(error instanceof KeyturnApiError) || error.status !== 404) {
        throw error
      }
      products.set(id, undefined)
    }
  }
  return products
}

/** Why a row's policy cannot go with its product, saying how to map it; undefined when it can. */
function policyProblem(
  request: Request,
  productOfPolicy: ReadonlyMap<PolicyId, ProductId | undefined>,
): string | undefined {
  const { policyId, productId } = request.row
  if (policyId === undefined || policyId === null || productOfPolicy.get(policyId) === productId) {
    return undefined
  }
  if (request.mappedFrom !== undefined) {
    return `--policy-map maps ${request.mappedFrom} to ${policyId}, which is not a policy of product ${productId}`
  }
  return `policy ${policyId} is not a policy of product ${productId} (a license exported from another product?): map it with --policy-map ${policyId}=<a policy of ${productId}>, or ${policyId}=none to import it without a policy`
}

/**
 * How long to wait for a batch the server is still importing (a run that was interrupted sent it):
 * up to about two minutes, what a batch of 500 rows with machines may take on a busy server.
 */
const inProgressRetries = [100, 200, 400, 800, 1600, 3200, ...Array.from({ length: 18 }, () => 6400)]

/**
 * Sends one batch. Its Idempotency-Key is the SHA-256 of its rows, so the same rows sent again (a
 * second run) replay the first answer, whose created rows count as created by an earlier run. When
 * this run's own attempt went unanswered (it timed out on a busy server, which went on importing)
 * and the client's retry got the replay, the rows are this run's: they count as created.
 */
async function send(io: Io, options: ApiOptions, batch: readonly Request[]): Promise<Outcome[]> {
  const rows = batch.map((request) => request.row)
  const idempotencyKey = `keyturn-import:${createHash('sha256').update(JSON.stringify(rows)).digest('hex').slice(0, 40)}`
  let replayed = false
  let unanswered = false
  let requestId: string | undefined
  // The client takes a fetch: this one notes whether the answer is a replay, its request id, and
  // whether an attempt of this run got no answer at all.
  const fetch: typeof globalThis.fetch = async (input, init) => {
    let response: Response
    try {
      response = await globalThis.fetch(input, init)
    } catch (error) {
      unanswered = true
      throw error
    }
    replayed = response.headers.get('idempotent-replayed') === 'true' && !unanswered
    requestId = response.headers.get('request-id') ?? undefined
    return response
  }
  const client = clientFor(io, options, fetch)
  for (let attempt = 0; ; attempt++) {
    let answer: ImportLicensesResult
    try {
      answer = await client.importLicenses({ licenses: rows }, { idempotencyKey })
    } catch (error) {
      if (!(error instanceof KeyturnApiError)) {
        throw error
      }
      const wait = inProgressRetries[attempt]
      if (error.code === 'idempotency_key_in_progress' && wait !== undefined) {
        await delay(wait)
        continue
      }
      if (error.status === 401 || error.status === 403) {
        throw error // the key cannot import at all (an admin key can): no row would go in
      }
      return batch.map((request) => ({
        line: request.line,
        kind: 'failed',
        code: error.code,
        detail: error.detail,
        ...(error.requestId === undefined ? {} : { requestId: error.requestId }),
      }))
    }
    return answer.results.map((result): Outcome => {
      const request = batch[result.index] as Request // the server answers each row by its index
      if (result.status === 'error' || result.licenseId === undefined || result.key === undefined) {
        return {
          line: request.line,
          kind: 'failed',
          ...(result.problem === undefined ? {} : { code: result.problem.code }),
          detail: result.problem?.detail ?? 'not imported',
          ...(requestId === undefined ? {} : { requestId }),
        }
      }
      return {
        line: request.line,
        kind: result.status === 'created' && !replayed ? 'created' : 'existing',
        license: { id: result.licenseId, key: result.key },
        revoked: request.row.status === 'revoked' || request.row.status === 'suspended',
        policyId: request.row.policyId ?? null,
        ...(request.mappedFrom === undefined ? {} : { mappedFrom: request.mappedFrom }),
      }
    })
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
  const done = sorted.flatMap((outcome) => (outcome.kind === 'failed' ? [] : [outcome]))
  const revoked = done.filter((outcome) => outcome.revoked).length
  const mapped = new Map<string, number>()
  for (const outcome of done) {
    if (outcome.mappedFrom !== undefined) {
      const pair = `${outcome.mappedFrom} → ${outcome.policyId ?? 'none'}`
      mapped.set(pair, (mapped.get(pair) ?? 0) + 1)
    }
  }
  if (json) {
    printJson(io, {
      file,
      rows,
      created,
      alreadyImported: existing,
      failed: failures.length,
      revoked,
      policiesMapped: Object.fromEntries(mapped),
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
    if (revoked > 0) {
      io.print(`Revoked ${revoked} of them, as the file says (status revoked or suspended).`)
    }
    for (const [pair, count] of mapped) {
      io.print(`Policy ${pair} on ${count} row${count === 1 ? '' : 's'} (--policy-map).`)
    }
  }
  if (failures.length > 0) {
    throw new CommandFailed()
  }
}
