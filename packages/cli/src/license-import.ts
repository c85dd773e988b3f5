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
  type ActivateLicenseBody,
  ActivateLicenseBodySchema,
  type CreateLicenseBody,
  CreateLicenseBodySchema,
  CustomerEmailSchema,
  type CustomerId,
  maxUsageIncrement,
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
] as const
/** Read only with --keep-keys (a move from another system): carried over after the license is made. */
const movedFields = new Set(['activations'])
/** Fields `licenses export` writes that a new license cannot take: accepted, and ignored. */
const ignoredFields = new Set([
  'id',
  'object',
  'key',
  'statusDetails',
  'activationCount',
  'uses',
  'usesResetAt',
  'createdAt',
  'updatedAt',
])
const knownFields = new Set<string>([
  ...bodyFields,
  'externalId',
  'customerEmail',
  'status',
  ...ignoredFields,
  ...movedFields,
])
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
  /** The row's status is `revoked`: the new license is revoked once created. */
  readonly revoke: boolean
  /** The row's policy, when --policy-map replaced it (by `body.policyId`, or by none). */
  readonly mappedFrom?: PolicyId
  /** With --keep-keys: the uses counted so far, added once the license is made. */
  readonly uses?: number
  /** With --keep-keys: machines activated once the license is made (before a revocation). */
  readonly activations?: readonly ActivateLicenseBody[]
}

/** --policy-map: a policy of the file, and the target product's policy that replaces it (null: none). */
type PolicyMap = ReadonlyMap<string, PolicyId | null>

type Outcome =
  | {
      readonly line: number
      readonly kind: 'created' | 'existing'
      readonly license: LicenseResource
      readonly revoked: boolean
      readonly mappedFrom?: PolicyId
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
  const fileHash = createHash('sha256').update(content).digest('hex').slice(0, 32)
  const rows = format === 'csv' ? readCsv(content.toString('utf8')) : readJsonLines(content.toString('utf8'))

  const outcomes: Outcome[] = []
  const requests: Request[] = []
  const prepared: Request[] = []
  for (const row of rows) {
    const request =
      'problem' in row ? row : toRequest(row, options.product, fileHash, policyMap, options.keepKeys === true)
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

const rowStatuses = new Set(['active', 'expired', 'revoked'])

function toRequest(
  row: { readonly line: number; readonly fields: Readonly<Record<string, unknown>> },
  product: string | undefined,
  fileHash: string,
  policyMap: PolicyMap,
  keepKeys: boolean,
): Request | Problem {
  const { line, fields } = row
  const moved: { uses?: number; activations?: readonly ActivateLicenseBody[] } = {}
  const body = Object.fromEntries(
    bodyFields.flatMap((field) => (fields[field] === undefined ? [] : [[field, fields[field]]])),
  )
  if (keepKeys) {
    if (fields.key === undefined || fields.key === null || fields.key === '') {
      return { line, problem: 'key is empty: with --keep-keys every row needs its key' }
    }
    body.key = fields.key
    const uses = fields.uses ?? 0
    if (typeof uses !== 'number' || !Number.isSafeInteger(uses) || uses < 0) {
      return { line, problem: `uses must be an integer of at least 0, not ${JSON.stringify(fields.uses)}` }
    }
    moved.uses = uses
    const activations = fields.activations ?? []
    if (!Array.isArray(activations) || !activations.every((item) => Check(ActivateLicenseBodySchema, item))) {
      return {
        line,
        problem:
          'activations must be a JSON array of machines, each { "fingerprint": …, "name"?: …, "metadata"?: … }',
      }
    }
    moved.activations = activations as ActivateLicenseBody[]
  }
  if (product !== undefined) {
    body.productId = product
  }
  const { status } = fields
  if (status !== undefined && status !== null && !rowStatuses.has(String(status))) {
    return { line, problem: `status must be active, expired or revoked, not ${JSON.stringify(status)}` }
  }
  const revoke = status === 'revoked'
  let mappedFrom: PolicyId | undefined
  if (typeof body.policyId === 'string' && policyMap.has(body.policyId)) {
    mappedFrom = body.policyId as PolicyId // a key of the map: a policy id
    const to = policyMap.get(mappedFrom)
    if (to === null || to === undefined) {
      delete body.policyId
    } else {
      body.policyId = to
    }
  }
  const changes = { revoke, ...(mappedFrom === undefined ? {} : { mappedFrom }), ...moved }
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
    return {
      line,
      body,
      ...customer,
      ...changes,
      idempotencyKey: `keyturn-import:${body.productId}:${fileHash}:${line}`,
    }
  }
  if (typeof externalId !== 'string' || externalId.length > maxExternalIdLength) {
    return { line, problem: `externalId must be text of at most ${maxExternalIdLength} characters` }
  }
  return {
    line,
    body,
    ...customer,
    ...changes,
    idempotencyKey: `keyturn-import:${body.productId}:id:${externalId}`,
  }
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
    ...new Set(requests.flatMap((request) => (request.body.policyId ? [request.body.policyId] : []))),
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
  const { policyId, productId } = request.body
  if (policyId === undefined || policyId === null || productOfPolicy.get(policyId) === productId) {
    return undefined
  }
  if (request.mappedFrom !== undefined) {
    return `--policy-map maps ${request.mappedFrom} to ${policyId}, which is not a policy of product ${productId}`
  }
  return `policy ${policyId} is not a policy of product ${productId} (a license exported from another product?): map it with --policy-map ${policyId}=<a policy of ${productId}>, or ${policyId}=none to import it without a policy`
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
      const created = await client.createLicense(body, { idempotencyKey: request.idempotencyKey })
      const kind = replayed ? 'existing' : 'created'
      // An earlier run's license may be revoked since: then that run carried everything over.
      const current = replayed ? await client.getLicense(created.id) : created
      if (current.status !== 'revoked') {
        await carryOver(client, current, request)
      }
      // Revoking is idempotent: a run after an interruption revokes what the earlier run did not.
      const license =
        request.revoke && current.status !== 'revoked'
          ? await client.revokeLicense(created.id, { idempotencyKey: `${request.idempotencyKey}:revoke` })
          : current
      return {
        line: request.line,
        kind,
        license,
        revoked: request.revoke,
        ...(request.mappedFrom === undefined ? {} : { mappedFrom: request.mappedFrom }),
      }
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

/**
 * A moved license's uses and machines. Each usage request carries its own Idempotency-Key and a
 * repeated fingerprint is the same activation, so a run after an interruption adds nothing twice.
 */
async function carryOver(client: ReturnType<typeof clientFor>, license: LicenseResource, request: Request) {
  let left = request.uses ?? 0
  for (let part = 0; left > 0; part++) {
    const increment = Math.min(left, maxUsageIncrement)
    await client.incrementLicenseUsage(
      license.id,
      { increment },
      { idempotencyKey: `${request.idempotencyKey}:uses:${part}` },
    )
    left -= increment
  }
  for (const machine of request.activations ?? []) {
    await client.activateLicense(license.id, machine)
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
      const pair = `${outcome.mappedFrom} → ${outcome.license.policyId ?? 'none'}`
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
      io.print(`Revoked ${revoked} of them, as the file says (status revoked).`)
    }
    for (const [pair, count] of mapped) {
      io.print(`Policy ${pair} on ${count} row${count === 1 ? '' : 's'} (--policy-map).`)
    }
  }
  if (failures.length > 0) {
    throw new CommandFailed()
  }
}
