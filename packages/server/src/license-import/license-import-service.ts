/**
 * @module The batch import (`POST /licenses/import`): licenses moved from another licensing system,
 * as they were there. Each row is its own transaction (its customer, license, machines and event,
 * or nothing of it); rows name their product and are known again by their `externalId` (unique per
 * product), or without one by their key, so an import run twice makes nothing twice.
 */
import {
  type CustomerId,
  defaultMaxActivations,
  type ImportLicenseRow,
  type ImportLicensesBody,
  type ImportLicensesResult,
  type ImportRowResult,
  type LicenseId,
  type PolicyId,
  type ProductId,
} from '@keyturn/protocol'
import type { ActivationStore } from '../activations/activation-store.js'
import type { Clock } from '../core/clock.js'
import type { EntitlementResolver } from '../core/entitlement-resolver.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId, newLicenseKey, normalizeLicenseKey } from '../core/ids.js'
import { newMetadata } from '../core/metadata.js'
import { type Principal, requireAdmin } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import { toCustomerResource } from '../customers/customer-resource.js'
import type { CustomerStore } from '../customers/customer-store.js'
import { expirationDateBound, viewAt } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import { externalIdTaken, type PolicyLookup } from '../licenses/license-service.js'
import type { LicenseStore, NewLicense } from '../licenses/license-store.js'

export interface LicenseImportStores {
  readonly licenses: LicenseStore
  readonly customers: CustomerStore
  readonly activations: ActivationStore
}

export interface LicenseImportServiceDeps {
  /** Reads outside the rows' transactions: what of a request exists already. */
  readonly stores: LicenseImportStores
  readonly storage: UnitOfWork<LicenseImportStores>
  readonly products: ProductLookup
  readonly policies: PolicyLookup
  readonly entitlements: EntitlementResolver
  readonly clock: Clock
}

/** Rows of one request imported at once (each its own transaction). */
const rowsAtOnce = 8

export class LicenseImportService {
  readonly #deps: LicenseImportServiceDeps

  constructor(deps: LicenseImportServiceDeps) {
    this.#deps = deps
  }

  async import(principal: Principal, body: ImportLicensesBody): Promise<ImportLicensesResult> {
    requireAdmin(principal, 'import licenses')
    const reads = new RequestReads(this.#deps)
    await reads.prefetch(body.licenses)
    const results: ImportRowResult[] = new Array(body.licenses.length)
    let next = 0
    const worker = async () => {
      for (let index = next++; index < body.licenses.length; index = next++) {
        const row = body.licenses[index] as ImportLicenseRow // index < length
        results[index] = await this.#importRow(principal, row, index, reads)
      }
    }
    await Promise.all(Array.from({ length: Math.min(rowsAtOnce, body.licenses.length) }, worker))
    const count = (status: ImportRowResult['status']) => results.filter((r) => r.status === status).length
    return {
      summary: {
        rows: results.length,
        created: count('created'),
        unchanged: count('unchanged'),
        errors: count('error'),
      },
      results,
    }
  }

  async #importRow(
    principal: Principal,
    row: ImportLicenseRow,
    index: number,
    reads: RequestReads,
  ): Promise<ImportRowResult> {
    const at = `#/licenses/${index}`
    try {
      return await this.#write(principal, row, at, reads, index)
    } catch (error) {
      if (!(error instanceof DomainError)) {
        throw error
      }
      if (error.code === 'external_id_taken' && row.externalId !== undefined) {
        // Imported meanwhile by a request beside this one (the same batch sent twice at once).
        const found = await this.#deps.stores.licenses.findByExternalId(row.productId, row.externalId)
        if (found !== undefined) {
          return { index, status: 'unchanged', licenseId: found.id, key: found.key }
        }
      }
      return {
        index,
        status: 'error',
        problem: {
          code: error.code,
          detail: error.message,
          ...(error.fieldErrors === undefined
            ? {}
            : {
                errors: error.fieldErrors.map((field) => ({
                  // Pointers of shared checks name the field alone: they are made the row's.
                  pointer: field.pointer.startsWith(at) ? field.pointer : `${at}${field.pointer.slice(1)}`,
                  detail: field.detail,
                })),
              }),
        },
      }
    }
  }

  async #write(
    principal: Principal,
    row: ImportLicenseRow,
    at: string,
    reads: RequestReads,
    index: number,
  ): Promise<ImportRowResult> {
    const now = this.#deps.clock.now()
    await reads.requireProduct(row.productId)
    const known = row.externalId === undefined ? undefined : reads.imported(row.productId, row.externalId)
    if (known !== undefined) {
      return { index, status: 'unchanged', licenseId: known.id, key: known.key }
    }
    const policy = await reads.policy(row.policyId ?? null, row.productId, `${at}/policyId`)
    const own = await this.#deps.entitlements.resolve(
      row.productId,
      row.entitlements ?? [],
      `${at}/entitlements`,
    )
    const made = newLicense(row, policy, now, at)
    const machines = (row.activations ?? []).map((machine) => ({
      ...machine,
      lastSeen:
        machine.lastSeenAt === undefined || machine.lastSeenAt === null ? now : new Date(machine.lastSeenAt),
    }))
    if (new Set(machines.map((machine) => machine.fingerprint)).size < machines.length) {
      throw new InvalidInputError(`${at}/activations`, "Each machine may appear once in a row's activations.")
    }
    // A machine last seen longer ago than the heartbeat TTL holds no seat: its lease has ended.
    const seated = machines.filter(
      (machine) =>
        made.heartbeatTtl === null || machine.lastSeen.getTime() + made.heartbeatTtl * 1000 > now.getTime(),
    ).length
    if (made.maxActivations !== null && seated > made.maxActivations) {
      throw new DomainError(
        'activation_limit_reached',
        `The row brings ${seated} machines holding a seat; its license allows ${made.maxActivations}. Raise maxActivations or leave machines out.`,
        {
          fieldErrors: [{ pointer: `${at}/activations`, detail: 'More machines than seats.' }],
          extensions: { maxActivations: made.maxActivations, activationCount: seated },
        },
      )
    }
    // Machines already at work: a license waiting for its first activation starts its time now.
    const license: NewLicense = {
      ...made,
      activationCount: machines.length,
      ...(made.firstActivationDuration !== null && machines.length > 0
        ? {
            expirationDate: new Date(now.getTime() + made.firstActivationDuration * 1000),
            firstActivationDuration: null,
          }
        : {}),
    }
    return this.#deps.storage.write(principal, async ({ licenses, customers, activations, events }) => {
      // With an externalId, the request's first read found none (and the unique index stands guard).
      const existing =
        row.externalId === undefined && row.key !== undefined
          ? await licenses.find({ key: license.key })
          : undefined
      if (existing !== undefined) {
        if (existing.productId !== row.productId) {
          throw keyTaken(at)
        }
        return { index, status: 'unchanged', licenseId: existing.id, key: existing.key }
      }
      const customerId = await this.#customerOf(row, reads, customers, events, now, at)
      const inserted = await licenses.insert(
        { ...license, customerId },
        own.map((entitlement) => entitlement.id),
        [],
      )
      if (inserted === 'key_taken') {
        throw keyTaken(at)
      }
      if (inserted === 'external_id_taken') {
        throw externalIdTaken(row.productId) // an import running beside this one made it meanwhile
      }
      if (inserted !== 'ok') {
        throw new DomainError(
          'customer_not_found',
          'The customer or policy of the row was deleted meanwhile.',
        )
      }
      await activations.insertImported(
        machines.map((machine) => ({
          id: newId('activation'),
          licenseId: license.id,
          productId: license.productId,
          fingerprint: machine.fingerprint,
          name: machine.name ?? null,
          metadata: machine.metadata ?? null,
          at: machine.lastSeen,
          heartbeatTtl: license.heartbeatTtl,
          awaitsFirstActivation: false,
        })),
      )
      // The license as stored, without reading it back (the event's data is the API's view of it).
      const view = viewAt(
        {
          ...license,
          customerId,
          activationCount: seated,
          entitlements: [...new Set([...own.map((e) => e.code), ...(policy?.entitlements ?? [])])].sort(),
        },
        now,
      )
      events.record('license.created', row.productId, toLicenseResource(view))
      return { index, status: 'created', licenseId: license.id, key: license.key }
    })
  }

  /** The row's customer: found by email (any case) or created, else the id given (which must exist). */
  async #customerOf(
    row: ImportLicenseRow,
    reads: RequestReads,
    customers: CustomerStore,
    events: { record: (type: 'customer.created', productId: null, data: object) => void },
    now: Date,
    at: string,
  ): Promise<CustomerId | null> {
    const email = row.customerEmail ?? null
    if (email === null) {
      const id = row.customerId ?? null
      if (id !== null && (await customers.findById(id, undefined)) === undefined) {
        throw new DomainError('customer_not_found', `No customer ${id} exists.`, {
          fieldErrors: [{ pointer: `${at}/customerId`, detail: 'No such customer.' }],
        })
      }
      return id
    }
    const known = reads.customer(email)
    if (known !== undefined) {
      return known
    }
    const found = await customers.findByEmail(email)
    if (found !== undefined) {
      return found.id
    }
    const written = await customers.insert({
      id: newId('customer'),
      email,
      name: row.customerName ?? null,
      metadata: {},
      mailOptOut: false,
      createdAt: now,
      updatedAt: now,
    })
    if (written.kind === 'ok') {
      events.record('customer.created', null, toCustomerResource(written.customer))
      return written.customer.id
    }
    // Made meanwhile by a row beside this one: committed, so now it is found.
    const again = await customers.findByEmail(email)
    if (again === undefined) {
      throw new Error(`customer ${email} is neither insertable nor found`)
    }
    return again.id
  }
}

type Policy = NonNullable<Awaited<ReturnType<PolicyLookup['findPolicy']>>>

/** What the rows of one request share: each product and policy is read once. */
class RequestReads {
  readonly #deps: LicenseImportServiceDeps
  readonly #products = new Map<ProductId, Promise<DomainError | undefined>>()
  readonly #policies = new Map<PolicyId, Promise<Policy | undefined>>()
  /** Per product, the request's externalIds that are licenses already. */
  readonly #imported = new Map<
    ProductId,
    ReadonlyMap<string, { readonly id: LicenseId; readonly key: string }>
  >()
  /** The request's customer emails (lower-cased) that are customers already. */
  #customers: ReadonlyMap<string, CustomerId> = new Map()

  constructor(deps: LicenseImportServiceDeps) {
    this.#deps = deps
  }

  /**
   * Reads what of the request exists already, a few statements for all its rows: a re-run's rows
   * are answered without a transaction, and a row's customer is most often found here.
   */
  async prefetch(rows: readonly ImportLicenseRow[]): Promise<void> {
    const byProduct = new Map<ProductId, string[]>()
    for (const row of rows) {
      if (row.externalId !== undefined) {
        const externalIds = byProduct.get(row.productId)
        if (externalIds === undefined) {
          byProduct.set(row.productId, [row.externalId])
        } else {
          externalIds.push(row.externalId)
        }
      }
    }
    for (const [productId, externalIds] of byProduct) {
      this.#imported.set(productId, await this.#deps.stores.licenses.findExternalIds(productId, externalIds))
    }
    const emails = rows.flatMap((row) => (typeof row.customerEmail === 'string' ? [row.customerEmail] : []))
    this.#customers = await this.#deps.stores.customers.findIdsByEmails(emails)
  }

  imported(productId: ProductId, externalId: string) {
    return this.#imported.get(productId)?.get(externalId)
  }

  customer(email: string): CustomerId | undefined {
    return this.#customers.get(email.toLowerCase())
  }

  async requireProduct(id: ProductId): Promise<void> {
    let check = this.#products.get(id)
    if (check === undefined) {
      check = this.#deps.products.findProduct(id).then((product) =>
        product === undefined
          ? new DomainError('product_not_found', `No product ${id} exists.`, {
              fieldErrors: [{ pointer: '#/productId', detail: 'No such product.' }],
            })
          : product.isSuspended
            ? new DomainError(
                'product_suspended',
                `Product ${id} is suspended; no license is imported for it.`,
              )
            : undefined,
      )
      this.#products.set(id, check)
    }
    const refusal = await check
    if (refusal !== undefined) {
      throw refusal
    }
  }

  async policy(id: PolicyId | null, productId: ProductId, pointer: string): Promise<Policy | undefined> {
    if (id === null) {
      return undefined
    }
    let found = this.#policies.get(id)
    if (found === undefined) {
      found = this.#deps.policies.findPolicy(id)
      this.#policies.set(id, found)
    }
    const policy = await found
    if (policy === undefined || policy.productId !== productId) {
      throw new InvalidInputError(pointer, `Product ${productId} has no policy ${id}.`)
    }
    return policy
  }
}

function keyTaken(at: string): DomainError {
  return new DomainError(
    'license_key_taken',
    'Another license already has this key (keys are unique across the server); nothing was imported.',
    { fieldErrors: [{ pointer: `${at}/key`, detail: 'Taken.' }] },
  )
}

/**
 * The license a row makes: what the row gives wins, then its policy, then the defaults, as for
 * `POST /licenses`; but its expiration date may have passed, and its status and uses are kept.
 */
function newLicense(row: ImportLicenseRow, policy: Policy | undefined, now: Date, at: string): NewLicense {
  const expirationDate = row.expirationDate === undefined ? undefined : dateOf(row.expirationDate, at)
  const expiry =
    expirationDate !== undefined || policy === undefined || policy.duration === null
      ? { expirationDate: expirationDate ?? null, firstActivationDuration: null }
      : policy.expirationBasis === 'firstActivation'
        ? { expirationDate: null, firstActivationDuration: policy.duration }
        : { expirationDate: new Date(now.getTime() + policy.duration * 1000), firstActivationDuration: null }
  if (row.status === 'expired' && !(expiry.expirationDate !== null && expiry.expirationDate <= now)) {
    throw new InvalidInputError(
      `${at}/expirationDate`,
      'status is expired: expirationDate must be given and have passed (the status is read from it).',
    )
  }
  const suspended = row.status === 'suspended'
  const metadata = newMetadata(row.metadata)
  return {
    id: newId('license') as LicenseId,
    productId: row.productId,
    key: row.key === undefined ? newLicenseKey() : normalizeLicenseKey(row.key),
    maxActivations:
      row.maxActivations !== undefined
        ? row.maxActivations
        : policy !== undefined
          ? policy.maxActivations
          : defaultMaxActivations,
    ...expiry,
    revokedAt: row.status === 'revoked' || suspended ? now : null,
    activationCount: 0,
    heartbeatTtl: row.heartbeatTtl !== undefined ? row.heartbeatTtl : (policy?.heartbeatTtl ?? null),
    maxUses: row.maxUses !== undefined ? row.maxUses : (policy?.maxUses ?? null),
    uses: row.uses ?? 0,
    usesResetAt: null,
    customerId: null, // set once found or created, in the row's transaction
    policyId: row.policyId ?? null,
    metadata: suspended ? { ...metadata, importedStatus: 'suspended' } : metadata,
    paymentGraceEndsAt: null,
    externalId: row.externalId ?? null,
    createdAt: now,
    updatedAt: now,
  }
}

function dateOf(value: string | null, at: string): Date | null {
  if (value === null) {
    return null
  }
  const date = new Date(value)
  if (Number.isNaN(date.getTime()) || !(date < expirationDateBound)) {
    throw new InvalidInputError(
      `${at}/expirationDate`,
      `expirationDate must be a readable timestamp before ${expirationDateBound.toISOString()}; null: never expires.`,
    )
  }
  return date
}
