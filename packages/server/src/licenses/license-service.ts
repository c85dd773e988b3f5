import {
  type CreateLicenseBody,
  type CustomerId,
  defaultMaxActivations,
  type EntitlementId,
  type ExpirationBasis,
  type LicenseId,
  type ListLicensesQuery,
  maxDurationSeconds,
  type Paginated,
  type PolicyId,
  type ProductId,
  type RenewLicenseBody,
  type UpdateLicenseBody,
  type ValidateLicenseBody,
  type ValidationReason,
} from '@keyturn/protocol'
import type { ActivationCheck } from '../core/activation-check.js'
import { type ActivityCounts, countNothing } from '../core/activity-counts.js'
import type { Clock } from '../core/clock.js'
import type { EntitlementResolver } from '../core/entitlement-resolver.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId, newLicenseKey, normalizeLicenseKey } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { mergeMetadata, newMetadata } from '../core/metadata.js'
import {
  apiKeyGone,
  canSeeProduct,
  type Principal,
  requireManagementKey,
  scopedProductId,
} from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import { type CustomerActor, isCustomerActor, type UnitOfWork } from '../core/unit-of-work.js'
import { checkInAt } from '../policies/check-in.js'
import {
  expirationDateBound,
  type License,
  type LicenseValidation,
  type LicenseView,
  viewAt,
} from './license.js'
import { toLicenseResource, toValidationResult } from './license-resource.js'
import { type LicenseChanges, type LicenseStore, licenseListSpec, type NewLicense } from './license-store.js'

/** What licenses need of policies (PolicyService fits). */
export interface PolicyLookup {
  findPolicy(id: PolicyId): Promise<
    | {
        readonly productId: ProductId
        readonly maxActivations: number | null
        readonly duration: number | null
        readonly expirationBasis: ExpirationBasis
        readonly heartbeatTtl: number | null
        readonly maxUses: number | null
        readonly entitlements: readonly string[]
      }
    | undefined
  >
}

/** What licenses need of customers (CustomerService fits). */
export interface CustomerLookup {
  exists(id: CustomerId): Promise<boolean>
}

export interface LicenseServiceDeps {
  readonly licenses: LicenseStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly licenses: LicenseStore }>
  /**
   * Whether validation outcomes are recorded as events (KEYTURN_RECORD_VALIDATIONS, or an endpoint
   * subscribes): a synchronous in-memory check, so validation pays nothing when nobody wants them.
   */
  readonly recordsValidations: () => boolean
  /** Daily statistics: licenses created, renewed and revoked, validations; default none. */
  readonly counts?: ActivityCounts
  readonly products: ProductLookup
  readonly activations: ActivationCheck
  readonly policies: PolicyLookup
  readonly customers: CustomerLookup
  readonly entitlements: EntitlementResolver
  readonly clock: Clock
}

export class LicenseService {
  readonly #licenses: LicenseStore
  readonly #storage: UnitOfWork<{ readonly licenses: LicenseStore }>
  readonly #recordsValidations: () => boolean
  readonly #counts: ActivityCounts
  readonly #products: ProductLookup
  readonly #activations: ActivationCheck
  readonly #policies: PolicyLookup
  readonly #customers: CustomerLookup
  readonly #entitlements: EntitlementResolver
  readonly #clock: Clock

  constructor(deps: LicenseServiceDeps) {
    this.#licenses = deps.licenses
    this.#storage = deps.storage
    this.#recordsValidations = deps.recordsValidations
    this.#counts = deps.counts ?? countNothing
    this.#products = deps.products
    this.#activations = deps.activations
    this.#policies = deps.policies
    this.#customers = deps.customers
    this.#entitlements = deps.entitlements
    this.#clock = deps.clock
  }

  async create(principal: Principal, input: CreateLicenseBody): Promise<LicenseView> {
    const now = this.#clock.now()
    // Fast path (docs/decisions/0017-fewer-round-trips-postgresql.md): a license that names no policy and no entitlements needs nothing read
    // before its insert, which itself confirms the product and the caller's API key (the route's
    // config.confirmsApiKey; LicenseStore.insert's `onlyFor`). On PostgreSQL that is one statement
    // where the product's read made two. Whatever it refuses takes
    // the way below, which reads first and says why.
    const readsNothing = (input.policyId ?? null) === null && (input.entitlements ?? []).length === 0
    if (readsNothing && principal.role !== 'client' && canSeeProduct(principal, input.productId)) {
      const created = await this.#insert(
        principal,
        newLicenseFrom(input, undefined, now),
        noEntitlements,
        now,
      )
      if (typeof created === 'object') {
        return created
      }
    }
    await this.#creatableProduct(principal, input.productId)
    const policy = await this.#policyFor(input.policyId ?? null, input.productId)
    await this.#requireCustomer(input.customerId ?? null)
    const own = await this.#entitlements.resolve(input.productId, input.entitlements ?? [], '#/entitlements')
    const entitlements = {
      ids: own.map((entitlement) => entitlement.id),
      codes: [...new Set([...own.map((entitlement) => entitlement.code), ...(policy?.entitlements ?? [])])],
    }
    const created = await this.#insert(principal, newLicenseFrom(input, policy, now), entitlements, now)
    if (created === 'product_refused') {
      // Suspended, deleted, or the API key deleted, between the read above and the insert.
      await this.#creatableProduct(principal, input.productId)
      throw new DomainError(
        'product_suspended',
        `Product ${input.productId} was suspended meanwhile; no license is created for it. Resume it first.`,
      )
    }
    if (created === 'reference_gone') {
      return this.#sayWhichReferenceWent(input.productId, input)
    }
    return created
  }

  /**
   * The product a license is created for, read with the caller's API key in one statement; the role
   * and the scope are checked after it, so that a deleted key hears 401, not 403.
   */
  async #creatableProduct(principal: Principal, productId: ProductId): Promise<void> {
    const product = await this.#products.findProductConfirming(productId, principal.apiKeyId)
    if (product === 'api_key_gone') {
      throw apiKeyGone()
    }
    requireManagementKey(principal)
    if (!canSeeProduct(principal, productId)) {
      throw new DomainError('forbidden', 'This API key may only create licenses for its own product.')
    }
    if (product === undefined) {
      throw new DomainError('product_not_found', `No product ${productId} exists.`, {
        fieldErrors: [{ pointer: '#/productId', detail: 'No such product.' }],
      })
    }
    requireActiveProduct(product, 'no license is created for it')
  }

  /**
   * Writes the license, the links to its own entitlements (`ids`; `codes` adds its policy's) and its
   * `license.created` event (one statement on PostgreSQL), only while its product is active and the
   * caller's API key exists.
   */
  async #insert(
    principal: Principal,
    license: NewLicense,
    entitlements: Entitlements,
    now: Date,
  ): Promise<LicenseView | 'product_refused' | 'reference_gone'> {
    const view = viewAt({ ...license, entitlements: [...entitlements.codes].sort() }, now)
    const keyTaken = () =>
      new DomainError('license_key_taken', 'Another license already has this key; nothing was created.', {
        fieldErrors: [{ pointer: '#/key', detail: 'Taken.' }],
      })
    try {
      await this.#storage.writeOne(principal, async ({ licenses, events }) => {
        events.record('license.created', license.productId, toLicenseResource(view))
        const inserted = await licenses.insert(license, entitlements.ids, events.take(), {
          apiKeyId: principal.apiKeyId,
        })
        if (inserted === 'key_taken') {
          throw keyTaken()
        }
        if (inserted === 'external_id_taken') {
          throw externalIdTaken(license.productId)
        }
        if (inserted !== 'ok') {
          throw new Refused(inserted) // undoes the transaction's other writes, on SQLite
        }
      })
      this.#counts.count(license.productId, 'licensesCreated')
      return view
    } catch (error) {
      if (error instanceof Refused) {
        return error.outcome
      }
      throw error
    }
  }

  /**
   * The license as the caller may see it. A customer signed in to the portal sees only their own
   * licenses: another's is not found, exactly like one that does not exist.
   */
  async get(principal: Principal | CustomerActor, id: LicenseId): Promise<LicenseView> {
    const now = this.#clock.now()
    const found = await this.#licenses.findForCaller({ id }, apiKeyOf(principal), 'view')
    return this.viewOf(this.#visibleConfirmed(principal, id, found), now)
  }

  /**
   * `get`, refused with 409 `license_not_active` unless the license can be used now (`refusal` ends
   * the detail), for a route that confirms its API key (config.confirmsApiKey): the license, its
   * product's suspension and the key are read by one statement.
   */
  async getUsable(
    principal: Principal | CustomerActor,
    id: LicenseId,
    refusal: string,
  ): Promise<LicenseView> {
    const now = this.#clock.now()
    const found = await this.#licenses.findForCaller({ id }, apiKeyOf(principal), 'use')
    const license = this.#visibleConfirmed(principal, id, typeof found === 'object' ? found.license : found)
    const view = await this.viewOf(license, now)
    refuseUnusable(view, unusableReasonOf(view, typeof found === 'object' && found.productUsable), refusal)
    return view
  }

  /**
   * The license a management key may see, read by a statement that also confirmed the caller's API
   * key (the route's config.confirmsApiKey); the role is checked after it, so that a deleted key
   * hears 401, not 403.
   */
  #visibleConfirmed(
    principal: Principal | CustomerActor,
    id: LicenseId,
    found: License | 'api_key_gone' | undefined,
  ): License {
    if (found === 'api_key_gone') {
      throw apiKeyGone()
    }
    if (isCustomerActor(principal)) {
      if (found === undefined || found.customerId !== principal.id) {
        throw licenseNotFound(id)
      }
      return found
    }
    requireManagementKey(principal)
    if (found === undefined || !canSeeProduct(principal, found.productId)) {
      throw licenseNotFound(id)
    }
    return found
  }

  async update(principal: Principal, id: LicenseId, input: UpdateLicenseBody): Promise<LicenseView> {
    requireManagementKey(principal)
    const now = this.#clock.now()
    const current = await this.#visible(principal, id)
    if (input.customerId !== undefined) {
      await this.#requireCustomer(input.customerId)
    }
    const own =
      input.entitlements === undefined
        ? undefined
        : await this.#entitlements.resolve(current.productId, input.entitlements, '#/entitlements')
    if (input.expiry !== undefined && input.policyId === undefined) {
      throw new InvalidInputError(
        '#/expiry',
        'expiry is given only with policyId: it says what a move to a policy does to the expiration date.',
      )
    }
    const move = input.policyId === undefined ? undefined : await this.#policyMove(current, input, now)
    const changes: LicenseChanges = {
      updatedAt: now,
      ...move,
      ...(input.maxActivations === undefined ? {} : { maxActivations: input.maxActivations }),
      // An explicit date replaces one a first activation would have set.
      ...(input.expirationDate === undefined
        ? {}
        : { expirationDate: futureDate(input.expirationDate, now), firstActivationDuration: null }),
      ...(input.heartbeatTtl === undefined ? {} : { heartbeatTtl: input.heartbeatTtl }),
      ...(input.maxUses === undefined ? {} : { maxUses: input.maxUses }),
      ...(input.customerId === undefined ? {} : { customerId: input.customerId }),
      ...(input.metadata === undefined ? {} : { metadata: mergeMetadata(current.metadata, input.metadata) }),
      ...(own === undefined ? {} : { entitlementIds: own.map((entitlement) => entitlement.id) }),
    }
    if (Object.keys(changes).length === 1) {
      return this.viewOf(current, now) // nothing to change: keep updatedAt honest
    }
    requireActiveProduct(
      await this.#products.findProduct(current.productId),
      'its licenses cannot be changed',
    )
    const type = move === undefined ? 'license.updated' : 'license.policy_changed'
    const extra = move === undefined ? undefined : { previousPolicyId: current.policyId }
    return this.#apply(principal, type, current, changes, now, extra).catch((error: unknown) =>
      error instanceof ReferenceGone
        ? this.#sayWhichReferenceWent(current.productId, input)
        : Promise.reject(error),
    )
  }

  /**
   * Extends the license by `duration` seconds (default: its policy's): the new expiration date is
   * max(now, current one) + duration, so an early renewal loses no paid time and a lapsed one starts
   * from now. A license waiting for its first activation gets the time added to what that
   * activation will start. Revoked stays revoked. 409 `license_does_not_expire` for one that never expires.
   */
  async renew(principal: Principal, id: LicenseId, input: RenewLicenseBody): Promise<LicenseView> {
    requireManagementKey(principal)
    const now = this.#clock.now()
    const visible = await this.#visible(principal, id)
    const duration = input.duration ?? (await this.#policyDuration(visible.policyId))
    if (duration === null) {
      throw new InvalidInputError(
        '#/duration',
        `duration is required: license ${id} has no policy with a duration to renew by.`,
      )
    }
    // Read and changed under the license's row lock: simultaneous renewals take turns and each
    // counts (with a compare-and-set and five attempts, ten at once on PostgreSQL gave 500s).
    const renewed = await this.#storage.write(principal, async ({ licenses, events }) => {
      const current = await licenses.findForUpdate(id)
      if (current === undefined) {
        throw licenseNotFound(id)
      }
      let changes: LicenseChanges
      if (current.firstActivationDuration !== null) {
        // What the first activation will add stays a duration (at most 100 years, like a policy's),
        // so the expiration date it makes stays a date both engines store.
        const pending = current.firstActivationDuration + duration
        if (pending > maxDurationSeconds) {
          throw new InvalidInputError(
            '#/duration',
            `License ${id} waits for its first activation with ${current.firstActivationDuration} seconds; renewed, it would hold ${pending}, more than ${maxDurationSeconds} (100 years).`,
          )
        }
        changes = { updatedAt: now, firstActivationDuration: pending }
      } else if (current.expirationDate === null) {
        throw new DomainError(
          'license_does_not_expire',
          `License ${id} never expires; there is nothing to renew.`,
        )
      } else {
        const from = Math.max(current.expirationDate.getTime(), now.getTime())
        const expirationDate = afterSeconds(new Date(from), duration)
        if (!(expirationDate < expirationDateBound)) {
          throw new InvalidInputError(
            '#/duration',
            `The renewed expiration date would pass ${expirationDateBound.toISOString()}.`,
          )
        }
        changes = { updatedAt: now, expirationDate }
      }
      const updated = await licenses.update(id, changes)
      if (updated === undefined || updated === 'reference_gone' || updated === 'conflict') {
        throw licenseNotFound(id) // the row is locked: it cannot have gone or moved meanwhile
      }
      const view = viewAt(updated, now)
      events.record('license.renewed', updated.productId, toLicenseResource(view))
      return view
    })
    this.#counts.count(renewed.license.productId, 'licensesRenewed')
    return renewed
  }

  /** Idempotent: revoking a revoked license changes nothing. */
  async revoke(principal: Principal, id: LicenseId): Promise<LicenseView> {
    requireManagementKey(principal)
    const now = this.#clock.now()
    const current = await this.#visible(principal, id)
    if (current.revokedAt !== null) {
      return this.viewOf(current, now)
    }
    const revoked = await this.#apply(
      principal,
      'license.revoked',
      current,
      { revokedAt: now, updatedAt: now },
      now,
    )
    this.#counts.count(revoked.license.productId, 'licensesRevoked')
    return revoked
  }

  /** Idempotent; the status afterwards is `expired` if the expiration date has passed, else `active`. */
  async reinstate(principal: Principal, id: LicenseId): Promise<LicenseView> {
    requireManagementKey(principal)
    const now = this.#clock.now()
    const current = await this.#visible(principal, id)
    if (current.revokedAt === null) {
      return this.viewOf(current, now)
    }
    return this.#apply(principal, 'license.reinstated', current, { revokedAt: null, updatedAt: now }, now)
  }

  async list(principal: Principal, query: ListLicensesQuery): Promise<Paginated<LicenseView>> {
    requireManagementKey(principal)
    const now = this.#clock.now()
    const request = parseListQuery(query, licenseListSpec)
    const scope = scopedProductId(principal)
    if (scope !== undefined && query.productId !== undefined && query.productId !== scope) {
      // Another product's licenses are invisible to a product key: an empty list, not an error.
      return toPage({ items: [], totalCount: 0, offset: 0 }, request.limit, request.page ?? 0)
    }
    const slice = await this.#licenses.list({
      request,
      productId: scope ?? query.productId,
      externalId: query.externalId,
      now,
    })
    const views = await this.#viewsAt(slice.items, now)
    return toPage({ ...slice, items: views }, request.limit, pageOf(request, slice.offset))
  }

  /** An unknown key, or one of another product, is not found; a known key gets a verdict (docs/decisions/0001-licenses.md). */
  /** A license by its key, as the caller may see it: an unknown key, or one of another product, is not found. */
  async getByKey(principal: Principal, key: string, productId: ProductId): Promise<LicenseView> {
    const now = this.#clock.now()
    const license = await this.#licenses.find({ key: normalizeLicenseKey(key) })
    return this.viewOf(requireKeyOfProduct(principal, license, productId), now)
  }

  /**
   * `getUsable` by key: the license, its product's suspension and the key are read by one
   * statement (LicenseStore.findForCaller), where reading them apart took three.
   */
  async getUsableByKey(
    principal: Principal,
    key: string,
    productId: ProductId,
    refusal: string,
  ): Promise<LicenseView> {
    const now = this.#clock.now()
    const found = await this.#licenses.findForCaller(
      { key: normalizeLicenseKey(key) },
      principal.apiKeyId,
      'use',
    )
    if (found === 'api_key_gone') {
      throw apiKeyGone()
    }
    const view = await this.viewOf(requireKeyOfProduct(principal, found?.license, productId), now)
    refuseUnusable(view, unusableReasonOf(view, found?.productUsable === true), refusal)
    return view
  }

  /**
   * The online check (docs/decisions/0001-licenses.md): a known key gets a verdict, reason revoked > expired > suspended
   * (product) > payment_overdue (grace over) > not_activated (only when a fingerprint is given and holds no seat, also a lapsed
   * floating seat) > entitlements_missing (only when entitlements are asked for; read with the
   * license, no query) > usage_exceeded (a metered license whose uses reached maxUses).
   */
  async validate(principal: Principal, input: ValidateLicenseBody): Promise<LicenseValidation> {
    const now = this.#clock.now()
    // The license, its product's suspension, its policy's check-in fields and the caller's API key in one statement
    // (LicenseStore.findForCaller; the route's config.confirmsApiKey).
    const found = await this.#licenses.findForCaller(
      { key: normalizeLicenseKey(input.key) },
      principal.apiKeyId,
      'use',
    )
    if (found === 'api_key_gone') {
      throw apiKeyGone()
    }
    const view = await this.viewOf(requireKeyOfProduct(principal, found?.license, input.productId), now)
    const { license, state } = view
    const reason: ValidationReason | null =
      unusableReasonOf(view, found?.productUsable === true) ??
      (input.fingerprint !== undefined &&
      (await this.#activations.findAlive(license.id, input.fingerprint, state.determinedAt)) === undefined
        ? 'not_activated'
        : input.entitlements !== undefined &&
            !input.entitlements.every((code) => view.license.entitlements.includes(code))
          ? 'entitlements_missing'
          : null) ??
      (license.maxUses !== null && license.uses >= license.maxUses ? 'usage_exceeded' : null)
    // The check-in deadline is read live from the policy, and only for a valid answer.
    // The check-in deadline: the policy's fields, read live in the same statement; valid answers only.
    const checkIn = reason === null ? checkInAt(found?.policyCheckIn, state.determinedAt) : {}
    const validation = { isValid: reason === null, reason, view, checkIn }
    this.#counts.count(license.productId, reason === null ? 'validationsValid' : 'validationsInvalid')
    if (this.#recordsValidations()) {
      const type = reason === null ? 'license.validated' : 'license.validation_failed'
      // A full disk costs the record, never the answer: applications keep validating.
      await this.#storage.recordUnlessFull(
        principal,
        type,
        view.license.productId,
        toValidationResult(validation),
      )
    }
    return validation
  }

  /** The license judged at `now`, counting only the activations that hold a seat then. */
  async viewOf(license: License, now: Date): Promise<LicenseView> {
    const [view] = await this.#viewsAt([license], now)
    return view ?? viewAt(license, now)
  }

  /**
   * Lapsed activations hold no seat but stay counted in the stored `activationCount` until the sweep
   * (or a new activation) removes them: subtract them here, with one query for a whole page.
   */
  async #viewsAt(licenses: readonly License[], now: Date): Promise<LicenseView[]> {
    const floating = licenses.filter((license) => license.heartbeatTtl !== null).map((license) => license.id)
    const lapsed = floating.length === 0 ? new Map() : await this.#activations.countLapsed(floating, now)
    return licenses.map((license) => {
      const gone = lapsed.get(license.id) ?? 0
      return viewAt(
        gone === 0 ? license : { ...license, activationCount: license.activationCount - gone },
        now,
      )
    })
  }

  async #visible(principal: Principal, id: LicenseId): Promise<License> {
    const license = await this.#licenses.find({ id })
    if (license === undefined || !canSeeProduct(principal, license.productId)) {
      throw licenseNotFound(id)
    }
    return license
  }

  async #apply(
    principal: Principal,
    type: 'license.updated' | 'license.policy_changed' | 'license.revoked' | 'license.reinstated',
    current: License,
    changes: LicenseChanges,
    now: Date,
    extra?: Readonly<Record<string, unknown>>,
  ): Promise<LicenseView> {
    // Lapsed seats stay lapsed through any change (a new heartbeatTtl renews only the alive ones):
    // counted before the transaction, they make the event's activationCount the one shown.
    const lapsed =
      current.heartbeatTtl === null
        ? 0
        : ((await this.#activations.countLapsed([current.id], now)).get(current.id) ?? 0)
    return this.#storage.write(principal, async ({ licenses, events }) => {
      const updated = await licenses.update(current.id, changes)
      if (updated === 'reference_gone') {
        throw new ReferenceGone()
      }
      if (updated === undefined || updated === 'conflict') {
        throw licenseNotFound(current.id)
      }
      const view = viewAt({ ...updated, activationCount: updated.activationCount - lapsed }, now)
      events.record(type, updated.productId, { ...toLicenseResource(view), ...extra })
      return view
    })
  }

  /**
   * What moving `current` to the policy `input.policyId` changes: the policy, and the fields a policy
   * gives a license, from the new one (null: no policy, the fields keep their values); the request's
   * own values for them are laid over this by the caller. `expiry: 'reset'` makes the expiration
   * what a license made from the new policy now would get.
   */
  async #policyMove(current: License, input: UpdateLicenseBody, now: Date): Promise<LicenseChanges> {
    const policyId = input.policyId ?? null
    const policy = await this.#policyFor(policyId, current.productId)
    const expiry: Partial<LicenseChanges> =
      input.expiry !== 'reset'
        ? {}
        : policy === undefined || policy.duration === null
          ? { expirationDate: null, firstActivationDuration: null }
          : policy.expirationBasis === 'firstActivation' && current.activationCount === 0
            ? { expirationDate: null, firstActivationDuration: policy.duration }
            : { expirationDate: afterSeconds(now, policy.duration), firstActivationDuration: null }
    return {
      updatedAt: now,
      policyId,
      ...(policy === undefined
        ? {}
        : {
            maxActivations: policy.maxActivations,
            heartbeatTtl: policy.heartbeatTtl,
            maxUses: policy.maxUses,
          }),
      ...expiry,
    }
  }

  /** The policy a new license of `productId` is made from: it must be of the same product (else 400). */
  async #policyFor(policyId: PolicyId | null, productId: ProductId) {
    if (policyId === null) {
      return undefined
    }
    const policy = await this.#policies.findPolicy(policyId)
    if (policy === undefined || policy.productId !== productId) {
      throw new InvalidInputError('#/policyId', `Product ${productId} has no policy ${policyId}.`)
    }
    return policy
  }

  async #policyDuration(policyId: PolicyId | null): Promise<number | null> {
    if (policyId === null) {
      return null
    }
    return (await this.#policies.findPolicy(policyId))?.duration ?? null
  }

  /**
   * A write found a customer, policy or entitlement of the request gone (deleted between the checks
   * and the write; the foreign keys refused it, nothing changed): the checks run again, so the answer
   * names the one that went.
   */
  async #sayWhichReferenceWent(
    productId: ProductId,
    references: {
      customerId?: CustomerId | null
      policyId?: PolicyId | null
      entitlements?: readonly string[]
    },
  ): Promise<never> {
    await this.#policyFor(references.policyId ?? null, productId)
    await this.#requireCustomer(references.customerId ?? null)
    await this.#entitlements.resolve(productId, references.entitlements ?? [], '#/entitlements')
    throw new DomainError(
      'customer_not_found',
      'A customer, policy or entitlement named in the request was deleted meanwhile; nothing changed.',
    )
  }

  /** Any customer that exists may own a license (customers are not per product). */
  async #requireCustomer(customerId: CustomerId | null): Promise<void> {
    if (customerId !== null && !(await this.#customers.exists(customerId))) {
      throw new DomainError('customer_not_found', `No customer ${customerId} exists.`, {
        fieldErrors: [{ pointer: '#/customerId', detail: 'No such customer.' }],
      })
    }
  }
}

/** The policy a license is created from. */
type Policy = NonNullable<Awaited<ReturnType<PolicyLookup['findPolicy']>>>

/** A new license's entitlements: the ids of its own (linked to it), the codes of all (its view's). */
interface Entitlements {
  readonly ids: readonly EntitlementId[]
  readonly codes: readonly string[]
}

const noEntitlements: Entitlements = { ids: [], codes: [] }

/** An insert refused by the store (LicenseService's #insert): nothing of it is written. */
class Refused extends Error {
  readonly outcome: 'product_refused' | 'reference_gone'

  constructor(outcome: 'product_refused' | 'reference_gone') {
    super(outcome)
    this.outcome = outcome
  }
}

/** A write refused by a foreign key: what the request named went meanwhile (see #sayWhichReferenceWent). */
class ReferenceGone extends Error {}

export function externalIdTaken(productId: ProductId): DomainError {
  return new DomainError(
    'external_id_taken',
    `Another license of product ${productId} already has this externalId; nothing was created.`,
    { fieldErrors: [{ pointer: '#/externalId', detail: 'Taken.' }] },
  )
}

function licenseNotFound(id: LicenseId): DomainError {
  return new DomainError('license_not_found', `No license ${id} is visible to this API key.`)
}

function afterSeconds(from: Date, seconds: number): Date {
  return new Date(from.getTime() + seconds * 1000)
}

/** An expiration date must lie after `now` (and before `expirationDateBound`); null means the license never expires. */
function futureDate(value: string | null, now: Date): Date | null {
  if (value === null) {
    return null
  }
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) {
    // The schema's date-time format admits what Date cannot read, such as a leap second (23:59:60).
    throw new InvalidInputError(
      '#/expirationDate',
      `expirationDate "${value}" is not a timestamp this server can read.`,
    )
  }
  if (!(date > now)) {
    throw new InvalidInputError(
      '#/expirationDate',
      `expirationDate must be in the future (now is ${now.toISOString()}).`,
    )
  }
  if (!(date < expirationDateBound)) {
    throw new InvalidInputError(
      '#/expirationDate',
      `expirationDate must be before ${expirationDateBound.toISOString()}; use null for a license that never expires.`,
    )
  }
  return date
}

/** Throws 409 `product_suspended` for a suspended (or vanished) product; `refusal` ends the detail. */
function requireActiveProduct(
  product: { readonly id: ProductId; readonly isSuspended: boolean } | undefined,
  refusal: string,
): void {
  if (product === undefined || product.isSuspended) {
    const which = product === undefined ? 'The product' : `Product ${product.id}`
    throw new DomainError('product_suspended', `${which} is suspended; ${refusal}. Resume it first.`)
  }
}

type UnusableReason = 'revoked' | 'expired' | 'suspended' | 'payment_overdue'

/** Throws 409 `license_not_active` for a reason not to use the license; `refusal` ends the detail. */
function refuseUnusable(view: LicenseView, reason: UnusableReason | null, refusal: string): void {
  if (reason !== null) {
    const why =
      reason === 'suspended'
        ? 'belongs to a suspended product'
        : reason === 'payment_overdue'
          ? 'unpaid past its payment grace'
          : `is ${reason}`
    throw new DomainError('license_not_active', `License ${view.license.id} ${why}; ${refusal}.`)
  }
}

/**
 * The one rule for whether a license can be used now (validated, activated, given a token, its
 * uses counted): why not, as revoked > expired > suspended (its product) > payment_overdue (a
 * failed subscription payment whose grace is over; during the grace it stays usable), or null.
 */
function unusableReasonOf({ license, state }: LicenseView, productUsable: boolean): UnusableReason | null {
  return state.isRevoked
    ? 'revoked'
    : state.isExpired
      ? 'expired'
      : !productUsable
        ? 'suspended'
        : license.paymentGraceEndsAt !== null && license.paymentGraceEndsAt <= state.determinedAt
          ? 'payment_overdue'
          : null
}

/** A license found by key, as the caller may see it: an unknown key, or one of another product, is not found. */
function requireKeyOfProduct(
  principal: Principal,
  license: License | undefined,
  productId: ProductId,
): License {
  if (
    license === undefined ||
    license.productId !== productId ||
    !canSeeProduct(principal, license.productId)
  ) {
    throw new DomainError('license_not_found', 'No license with this key exists for this product.')
  }
  return license
}

/** The license `input` asks for: what the request gives wins, then the policy, then the defaults. */
export function newLicenseFrom(input: CreateLicenseBody, policy: Policy | undefined, now: Date): NewLicense {
  // Not `??`: null means unlimited (or never expires) and must not become the default.
  const maxActivations =
    input.maxActivations !== undefined
      ? input.maxActivations
      : policy !== undefined
        ? policy.maxActivations
        : defaultMaxActivations
  const expiry =
    input.expirationDate !== undefined || policy === undefined || policy.duration === null
      ? { expirationDate: futureDate(input.expirationDate ?? null, now), firstActivationDuration: null }
      : policy.expirationBasis === 'firstActivation'
        ? { expirationDate: null, firstActivationDuration: policy.duration }
        : { expirationDate: afterSeconds(now, policy.duration), firstActivationDuration: null }
  return {
    id: newId('license'),
    productId: input.productId,
    // A key of the vendor's own, canonical if shaped like Keyturn's; else 125 random bits (a
    // collision of those is not a case to handle; a given key may be taken: license_key_taken).
    key: input.key === undefined ? newLicenseKey() : normalizeLicenseKey(input.key),
    maxActivations,
    ...expiry,
    revokedAt: null,
    activationCount: 0,
    // What the request gives wins, then the policy; absent and null both mean "none" here: no
    // lease, unmetered.
    heartbeatTtl: input.heartbeatTtl !== undefined ? input.heartbeatTtl : (policy?.heartbeatTtl ?? null),
    maxUses: input.maxUses !== undefined ? input.maxUses : (policy?.maxUses ?? null),
    uses: 0,
    usesResetAt: null,
    customerId: input.customerId ?? null,
    policyId: input.policyId ?? null,
    metadata: newMetadata(input.metadata),
    paymentGraceEndsAt: null,
    externalId: input.externalId ?? null,
    createdAt: now,
    updatedAt: now,
  }
}

/** The API key a caller's reads confirm (config.confirmsApiKey); none for a portal customer. */
function apiKeyOf(by: Principal | CustomerActor): Principal['apiKeyId'] {
  return isCustomerActor(by) ? undefined : by.apiKeyId
}
