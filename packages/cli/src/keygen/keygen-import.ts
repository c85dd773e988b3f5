/**
 * @module `keyturn import keygen FILE`: moves a Keygen account export into Keyturn. Products,
 * entitlements and policies are made first (or found again: products and policies by the Keygen id
 * kept in their metadata, entitlements by code), then the licenses, with their machines and their
 * owners as customers, go through the batch import (`POST /licenses/import`), known again by their
 * Keygen id as `externalId`. Running it twice makes nothing twice; `--dry-run` only reads the file.
 */
import { readFile } from 'node:fs/promises'
import {
  type CreatePolicyBody,
  EntitlementCodeSchema,
  type ExpirationBasis,
  type ImportActivation,
  type ImportLicenseRow,
  maxCheckInSeconds,
  maxDurationSeconds,
  maxHeartbeatTtlSeconds,
  minCheckInSeconds,
  minDurationSeconds,
  minHeartbeatTtlSeconds,
  type PolicyId,
  type ProductId,
} from '@keyturn/protocol'
import { Check } from 'typebox/value'
import { type ApiOptions, clientFor } from '../api.js'
import { CommandFailed, UsageError } from '../errors.js'
import type { Io } from '../io.js'
import { printJson } from '../output.js'
import { type KeygenChunk, KeygenExportError, type KeygenRecord, readKeygenExport } from './keygen-export.js'

export interface KeygenImportOptions extends ApiOptions {
  readonly dryRun?: boolean
  readonly secretKey?: string
}

/** Keygen's heartbeat when its policy names none (Machine::HEARTBEAT_TTL). */
const keygenDefaultHeartbeat = 600
const batchRows = 500

/** Classes of a Keygen export that have no Keyturn counterpart, and why. */
const notMapped: Readonly<Record<string, string>> = {
  Account: 'the Keygen account itself: a Keyturn server is one vendor',
  AccountSetting: 'account settings of Keygen',
  Environment: 'Keygen environments: their records are imported like the rest, without the environment',
  Group: 'Keygen-only: groups of licenses, machines and users',
  GroupOwner: 'Keygen-only: owners of groups',
  GroupPermission: 'Keygen-only: permissions of groups',
  Key: "Keygen-only: a policy's pool of pre-made keys",
  LicenseUser: 'further users of a license: a Keyturn license has one customer (its Keygen owner)',
  MachineComponent: 'Keygen-only: hardware components of machines',
  MachineProcess: 'Keygen-only: processes of machines',
  Role: 'roles of Keygen users and tokens',
  RolePermission: 'permissions of Keygen roles',
  WebhookEndpoint: 'webhook endpoints: make them again in Keyturn (other event names and secrets)',
  Token: 'API tokens: make Keyturn API keys instead',
}
const releaseReason = 'Keygen-only: releases and software distribution'

interface Plan {
  readonly products: readonly { keygenId: string; name: string }[]
  readonly policies: readonly {
    keygenId: string
    productKeygenId: string
    body: Omit<CreatePolicyBody, 'productId'>
  }[]
  /** Entitlement codes each Keygen product needs, with their names. */
  readonly entitlements: ReadonlyMap<string, ReadonlyMap<string, string>>
  readonly licenses: readonly {
    keygenId: string
    productKeygenId: string
    policyKeygenId: string | null
    row: Omit<ImportLicenseRow, 'productId' | 'policyId'>
  }[]
  readonly customers: number
  readonly machines: number
  /** Classes not mapped: how many records, and why. */
  readonly skipped: ReadonlyMap<string, { count: number; reason: string }>
  /** What is mapped with a loss, or not at all, record by record. */
  readonly notes: readonly string[]
}

export async function importKeygen(io: Io, file: string, options: KeygenImportOptions): Promise<void> {
  const secretKey = options.secretKey ?? nonEmpty(io.env.KEYGEN_EXPORT_SECRET_KEY)
  if (options.dryRun !== true) {
    clientFor(io, options) // without an API key, stop before reading the file
  }
  const bytes = await readFile(file).catch((error: unknown) => {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : error}`)
  })
  let chunks: KeygenChunk[]
  try {
    chunks = readKeygenExport(bytes, secretKey)
  } catch (error) {
    if (error instanceof KeygenExportError) {
      throw new UsageError(`${file}: ${error.message}`)
    }
    throw error
  }
  const plan = planOf(chunks)
  if (options.dryRun === true) {
    printDryRun(io, plan, options.json === true)
    return
  }
  await run(io, options, plan)
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null)
const integer = (value: unknown): number | null =>
  typeof value === 'number' && Number.isSafeInteger(value) ? value : null
const object = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length > 0
    ? (value as Record<string, unknown>)
    : undefined

/** Adds `items` to the list under `key` (made when missing), in place. */
function appendTo<K, V>(lists: Map<K, V[]>, key: K, ...items: V[]): void {
  const list = lists.get(key)
  if (list === undefined) {
    lists.set(key, items)
  } else {
    list.push(...items)
  }
}

/** What the export's records become in Keyturn: a pure function of the file. */
export function planOf(chunks: readonly KeygenChunk[]): Plan {
  const byClass = new Map<string, KeygenRecord[]>()
  for (const chunk of chunks) {
    appendTo(byClass, chunk.className, ...chunk.records)
  }
  const of = (className: string) => byClass.get(className) ?? []
  const notes: string[] = []
  const skipped = new Map<string, { count: number; reason: string }>()
  const mapped = new Set([
    'Product',
    'Policy',
    'License',
    'Machine',
    'User',
    'Entitlement',
    'LicenseEntitlement',
    'PolicyEntitlement',
  ])
  for (const [className, records] of byClass) {
    if (!mapped.has(className)) {
      const reason =
        notMapped[className] ?? (className.startsWith('Release') ? releaseReason : 'not a Keyturn concept')
      skipped.set(className, { count: records.length, reason })
    }
  }

  const entitlementById = new Map<string, { code: string; name: string }>()
  for (const record of of('Entitlement')) {
    const code = String(record.code ?? '').toLowerCase()
    if (Check(EntitlementCodeSchema, code)) {
      entitlementById.set(String(record.id), { code, name: text(record.name) ?? code })
    } else {
      notes.push(
        `entitlement ${record.id} (${record.code}): its code cannot be a Keyturn code ([a-z0-9][a-z0-9._-]{0,63}); not imported, nor granted`,
      )
    }
  }
  const nameByCode = new Map(
    [...entitlementById.values()].map((entitlement) => [entitlement.code, entitlement.name]),
  )
  const codesOf = (records: readonly KeygenRecord[], owner: string) => {
    const codes = new Map<string, string[]>()
    for (const record of records) {
      const entitlement = entitlementById.get(String(record.entitlement_id))
      if (entitlement !== undefined) {
        const id = String(record[owner])
        appendTo(codes, id, entitlement.code)
      }
    }
    return codes
  }
  const policyCodes = codesOf(of('PolicyEntitlement'), 'policy_id')
  const licenseCodes = codesOf(of('LicenseEntitlement'), 'license_id')
  const entitlements = new Map<string, Map<string, string>>()
  const needs = (productKeygenId: string, codes: readonly string[]) => {
    const forProduct = entitlements.get(productKeygenId) ?? new Map<string, string>()
    for (const code of codes) {
      forProduct.set(code, nameByCode.get(code) ?? code)
    }
    entitlements.set(productKeygenId, forProduct)
  }

  const products = of('Product').map((record) => ({
    keygenId: String(record.id),
    name: (text(record.name) ?? `Keygen product ${record.id}`).slice(0, 200),
  }))
  const productIds = new Set(products.map((product) => product.keygenId))

  const policyById = new Map<string, KeygenRecord>()
  const policies = of('Policy').flatMap((record) => {
    const keygenId = String(record.id)
    const productKeygenId = String(record.product_id)
    if (!productIds.has(productKeygenId)) {
      notes.push(`policy ${keygenId}: its product ${productKeygenId} is not in the export; not imported`)
      return []
    }
    policyById.set(keygenId, record)
    const name = (text(record.name) ?? `Keygen policy ${keygenId}`).slice(0, 200)
    const codes = policyCodes.get(keygenId) ?? []
    needs(productKeygenId, codes)
    return [{ keygenId, productKeygenId, body: policyBody(record, name, codes, notes) }]
  })

  const userById = new Map(of('User').map((record) => [String(record.id), record]))
  const emails = new Set<string>()
  const machinesOf = new Map<string, ImportActivation[]>()
  let machines = 0
  for (const record of of('Machine')) {
    const fingerprint = text(record.fingerprint)
    if (fingerprint === null || fingerprint.length > 256) {
      notes.push(`machine ${record.id}: no fingerprint Keyturn can keep; not imported`)
      continue
    }
    const name = text(record.name) ?? text(record.hostname)
    const metadata = object(record.metadata)
    const machine: ImportActivation = {
      fingerprint,
      ...(name === null ? {} : { name: name.slice(0, 200) }),
      ...(metadata === undefined ? {} : { metadata }),
      lastSeenAt: text(record.last_heartbeat_at),
    }
    const license = String(record.license_id)
    appendTo(machinesOf, license, machine)
  }

  const licenses = of('License').flatMap((record) => {
    const keygenId = String(record.id)
    const productKeygenId = String(record.product_id)
    if (!productIds.has(productKeygenId)) {
      notes.push(`license ${keygenId}: its product ${productKeygenId} is not in the export; not imported`)
      return []
    }
    const policyKeygenId = text(record.policy_id)
    const policy = policyKeygenId === null ? undefined : policyById.get(policyKeygenId)
    const owner = userById.get(String(record.user_id))
    const email = text(owner?.email)
    if (email !== null) {
      emails.add(email.toLowerCase())
    }
    const ownerName = [text(owner?.first_name), text(owner?.last_name)]
      .filter((part) => part !== null)
      .join(' ')
    const codes = licenseCodes.get(keygenId) ?? []
    needs(productKeygenId, codes)
    const seats = integer(record.max_machines_override)
    const maxUses = integer(record.max_uses_override)
    const found = machinesOf.get(keygenId) ?? []
    machines += found.length
    const metadata = {
      ...(object(record.metadata) ?? {}),
      ...(text(record.name) === null ? {} : { keygenName: text(record.name) }),
    }
    const limit = seats ?? (policy === undefined ? 1 : seatsOf(policy))
    if (limit !== null && found.length > limit) {
      notes.push(
        `license ${keygenId}: ${found.length} machines for ${limit} seats (a Keygen overage): it will fail until its maxActivations is raised`,
      )
    }
    if (text(record.group_id) !== null) {
      notes.push(`license ${keygenId}: its Keygen group is not kept`)
    }
    return [
      {
        keygenId,
        productKeygenId,
        policyKeygenId: policy === undefined ? null : policyKeygenId,
        row: {
          externalId: keygenId,
          key: String(record.key),
          ...(record.suspended === true ? { status: 'suspended' as const } : {}),
          ...(record.expiry === undefined ? {} : { expirationDate: text(record.expiry) }),
          ...(seats === null ? {} : { maxActivations: seats }),
          ...(maxUses === null || maxUses < 1 ? {} : { maxUses }),
          ...(integer(record.uses) === null ? {} : { uses: integer(record.uses) as number }),
          ...(email === null
            ? {}
            : {
                customerEmail: email,
                ...(ownerName === '' ? {} : { customerName: ownerName.slice(0, 200) }),
              }),
          ...(codes.length === 0 ? {} : { entitlements: [...new Set(codes)] }),
          ...(Object.keys(metadata).length === 0 ? {} : { metadata }),
          ...(found.length === 0 ? {} : { activations: found }),
        },
      },
    ]
  })
  const licenseIds = new Set(licenses.map((license) => license.keygenId))
  for (const license of machinesOf.keys()) {
    if (!licenseIds.has(license)) {
      notes.push(`${machinesOf.get(license)?.length} machines of license ${license}, which is not imported`)
    }
  }
  return { products, policies, entitlements, licenses, customers: emails.size, machines, skipped, notes }
}

/** A Keygen policy's seats: node-locked is one machine; floating is max_machines (null: unlimited). */
function seatsOf(policy: KeygenRecord): number | null {
  return policy.floating === true ? integer(policy.max_machines) : 1
}

function policyBody(record: KeygenRecord, name: string, codes: readonly string[], notes: string[]) {
  const id = String(record.id)
  const duration = integer(record.duration)
  let keptDuration: number | null = null
  if (duration !== null && duration >= minDurationSeconds && duration <= maxDurationSeconds) {
    keptDuration = duration
  } else if (duration !== null) {
    notes.push(
      `policy ${id} (${name}): a duration of ${duration} s is outside Keyturn's ${minDurationSeconds}–${maxDurationSeconds} s: made without one`,
    )
  }
  const basis = text(record.expiration_basis) ?? 'FROM_CREATION'
  let expirationBasis: ExpirationBasis = 'creation'
  if (basis === 'FROM_FIRST_ACTIVATION') {
    expirationBasis = 'firstActivation'
  } else if (basis !== 'FROM_CREATION' && keptDuration !== null) {
    notes.push(
      `policy ${id} (${name}): expiration basis ${basis} becomes creation (Keyturn knows creation and first activation)`,
    )
  }
  let heartbeatTtl: number | null = null
  if (record.require_heartbeat === true) {
    const wanted = integer(record.heartbeat_duration) ?? keygenDefaultHeartbeat
    heartbeatTtl = Math.min(Math.max(wanted, minHeartbeatTtlSeconds), maxHeartbeatTtlSeconds)
    if (heartbeatTtl !== wanted) {
      notes.push(
        `policy ${id} (${name}): a heartbeat of ${wanted} s becomes ${heartbeatTtl} s (Keyturn's range)`,
      )
    }
  }
  const maxUses = integer(record.max_uses)
  const checkInInterval = checkInOf(record, id, name, notes)
  const lost = [
    text(record.scheme) !== null ? `signed keys (${record.scheme}): kept as plain keys` : null,
    integer(record.max_processes) !== null ? 'process limits' : null,
    integer(record.max_cores) !== null ? 'core limits' : null,
    integer(record.max_users) !== null ? 'user limits' : null,
    record.use_pool === true ? 'the key pool' : null,
    record.strict === true ? 'strict validation' : null,
  ].filter((item) => item !== null)
  if (lost.length > 0) {
    notes.push(`policy ${id} (${name}): not mapped: ${lost.join(', ')}`)
  }
  return {
    name,
    maxActivations: seatsOf(record),
    duration: keptDuration,
    expirationBasis,
    heartbeatTtl,
    ...(checkInInterval === null ? {} : { checkInInterval }),
    ...(maxUses === null || maxUses < 1 ? {} : { maxUses }),
    ...(codes.length === 0 ? {} : { entitlements: [...new Set(codes)] }),
    metadata: { keygenId: id },
  }
}

/** Seconds of Keygen's check-in units, as Rails counts them (a month is 1/12 of 365.2425 days). */
const checkInUnits: Readonly<Record<string, number>> = {
  day: 86_400,
  week: 604_800,
  month: 2_629_746,
  year: 31_556_952,
}

/** A policy's required check-in (`check_in_interval_count` × `check_in_interval`) in seconds; null: none. */
function checkInOf(record: KeygenRecord, id: string, name: string, notes: string[]): number | null {
  if (record.require_check_in !== true) {
    return null
  }
  const unit = checkInUnits[String(record.check_in_interval)]
  const count = integer(record.check_in_interval_count) ?? 1
  if (unit === undefined) {
    notes.push(
      `policy ${id} (${name}): a check-in every ${record.check_in_interval} is not a Keygen interval Keyturn knows: made without one`,
    )
    return null
  }
  return Math.min(Math.max(unit * count, minCheckInSeconds), maxCheckInSeconds)
}

function printDryRun(io: Io, plan: Plan, json: boolean): void {
  const entitlementCount = [...plan.entitlements.values()].reduce((sum, codes) => sum + codes.size, 0)
  const skipped = [...plan.skipped].map(([className, { count, reason }]) => ({ className, count, reason }))
  if (json) {
    printJson(io, {
      products: plan.products.length,
      policies: plan.policies.length,
      entitlements: entitlementCount,
      customers: plan.customers,
      licenses: plan.licenses.length,
      machines: plan.machines,
      notMapped: skipped,
      notes: plan.notes,
    })
    return
  }
  io.print('Dry run: nothing is sent. The export maps to (found again when they exist):')
  io.print(`  products      ${plan.products.length}`)
  io.print(`  policies      ${plan.policies.length}`)
  io.print(`  entitlements  ${entitlementCount}`)
  io.print(`  customers     ${plan.customers} (license owners with an email)`)
  io.print(`  licenses      ${plan.licenses.length}, with ${plan.machines} machines`)
  if (skipped.length > 0) {
    io.print('Not mapped:')
    for (const { className, count, reason } of skipped) {
      io.print(`  ${className} (${count}): ${reason}`)
    }
  }
  if (plan.notes.length > 0) {
    io.print('Notes:')
    for (const note of plan.notes) {
      io.print(`  ${note}`)
    }
  }
}

async function run(io: Io, options: KeygenImportOptions, plan: Plan): Promise<void> {
  const client = clientFor(io, options)
  const counts = { productsMade: 0, policiesMade: 0, entitlementsMade: 0 }
  const productOf = new Map<string, ProductId>()
  const existingProducts = new Map<string, ProductId>()
  for await (const product of client.iterateProducts()) {
    const keygenId = product.metadata?.keygenId
    if (typeof keygenId === 'string') {
      existingProducts.set(keygenId, product.id)
    }
  }
  for (const product of plan.products) {
    let id = existingProducts.get(product.keygenId)
    if (id === undefined) {
      id = (
        await client.createProduct(
          { name: product.name, metadata: { keygenId: product.keygenId } },
          { idempotencyKey: `keygen-import:product:${product.keygenId}` },
        )
      ).id
      counts.productsMade++
    }
    productOf.set(product.keygenId, id)
  }
  for (const [productKeygenId, codes] of plan.entitlements) {
    const productId = productOf.get(productKeygenId)
    if (productId === undefined || codes.size === 0) {
      continue
    }
    const existing = new Set<string>()
    for await (const entitlement of client.iterateEntitlements({ productId })) {
      existing.add(entitlement.code)
    }
    for (const [code, name] of codes) {
      if (!existing.has(code)) {
        await client.createEntitlement(
          { productId, code, name: name.slice(0, 200) },
          { idempotencyKey: `keygen-import:entitlement:${productId}:${code}` },
        )
        counts.entitlementsMade++
      }
    }
  }
  const policyOf = new Map<string, PolicyId>()
  const existingPolicies = new Map<string, PolicyId>()
  for (const productId of new Set(productOf.values())) {
    for await (const policy of client.iteratePolicies({ productId })) {
      const keygenId = policy.metadata?.keygenId
      if (typeof keygenId === 'string') {
        existingPolicies.set(keygenId, policy.id)
      }
    }
  }
  for (const policy of plan.policies) {
    let id = existingPolicies.get(policy.keygenId)
    const productId = productOf.get(policy.productKeygenId)
    if (id === undefined && productId !== undefined) {
      id = (
        await client.createPolicy(
          { ...policy.body, productId },
          { idempotencyKey: `keygen-import:policy:${policy.keygenId}` },
        )
      ).id
      counts.policiesMade++
    }
    if (id !== undefined) {
      policyOf.set(policy.keygenId, id)
    }
  }

  const rows = plan.licenses.flatMap((license) => {
    const productId = productOf.get(license.productKeygenId)
    if (productId === undefined) {
      return []
    }
    const policyId = license.policyKeygenId === null ? undefined : policyOf.get(license.policyKeygenId)
    return [
      {
        keygenId: license.keygenId,
        row: { ...license.row, productId, ...(policyId === undefined ? {} : { policyId }) },
      },
    ]
  })
  const outcome = { created: 0, unchanged: 0, failures: [] as string[] }
  for (let start = 0; start < rows.length; start += batchRows) {
    const batch = rows.slice(start, start + batchRows)
    const answer = await client.importLicenses({ licenses: batch.map((item) => item.row) })
    for (const result of answer.results) {
      if (result.status === 'created') {
        outcome.created++
      } else if (result.status === 'unchanged') {
        outcome.unchanged++
      } else {
        const problem = result.problem
        outcome.failures.push(
          `license ${batch[result.index]?.keygenId}: ${problem?.code}: ${problem?.detail}`,
        )
      }
    }
  }
  for (const failure of outcome.failures) {
    io.printError(failure)
  }
  if (options.json === true) {
    printJson(io, {
      productsCreated: counts.productsMade,
      policiesCreated: counts.policiesMade,
      entitlementsCreated: counts.entitlementsMade,
      licenses: plan.licenses.length,
      licensesCreated: outcome.created,
      licensesAlreadyImported: outcome.unchanged,
      failed: outcome.failures.length,
      notMapped: [...plan.skipped].map(([className, { count, reason }]) => ({ className, count, reason })),
    })
  } else {
    io.print(
      `Products: ${counts.productsMade} created, ${plan.products.length - counts.productsMade} found again. Policies: ${counts.policiesMade} created, ${plan.policies.length - counts.policiesMade} found again. Entitlements: ${counts.entitlementsMade} created.`,
    )
    const failed =
      outcome.failures.length === 0 ? '' : `; ${outcome.failures.length} failed (listed on stderr)`
    io.print(
      `Licenses: ${outcome.created} created, ${outcome.unchanged} imported by an earlier run, of ${plan.licenses.length}${failed}.`,
    )
    if (plan.skipped.size > 0) {
      io.print(
        `Not mapped: ${[...plan.skipped].map(([className, { count }]) => `${className} (${count})`).join(', ')}; --dry-run says why.`,
      )
    }
  }
  if (outcome.failures.length > 0) {
    throw new CommandFailed()
  }
}
