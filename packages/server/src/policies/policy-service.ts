import {
  type CreatePolicyBody,
  defaultExpirationBasis,
  defaultMaxActivations,
  defaultMaxTransfers,
  defaultPolicyLicenseFileTtl,
  defaultTransferPeriod,
  type ListPoliciesQuery,
  type Paginated,
  type PolicyId,
  type UpdatePolicyBody,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import type { EntitlementResolver } from '../core/entitlement-resolver.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { mergeMetadata, newMetadata } from '../core/metadata.js'
import { canSeeProduct, type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import type { CheckInPolicy } from './check-in.js'
import type { Policy } from './policy.js'
import { toPolicyResource } from './policy-resource.js'
import { type PolicyStore, policyListSpec } from './policy-store.js'

export interface PolicyServiceDeps {
  readonly policies: PolicyStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly policies: PolicyStore }>
  readonly products: ProductLookup
  readonly entitlements: EntitlementResolver
  readonly clock: Clock
}

/** Policies belong to a product: product keys manage their own product's; client keys none. */
export class PolicyService {
  readonly #policies: PolicyStore
  readonly #storage: UnitOfWork<{ readonly policies: PolicyStore }>
  readonly #products: ProductLookup
  readonly #entitlements: EntitlementResolver
  readonly #clock: Clock

  constructor(deps: PolicyServiceDeps) {
    this.#policies = deps.policies
    this.#storage = deps.storage
    this.#products = deps.products
    this.#entitlements = deps.entitlements
    this.#clock = deps.clock
  }

  async create(principal: Principal, input: CreatePolicyBody): Promise<Policy> {
    requireManagementKey(principal)
    if (!canSeeProduct(principal, input.productId)) {
      throw new DomainError('forbidden', 'This API key may only create policies for its own product.')
    }
    if ((await this.#products.findProduct(input.productId)) === undefined) {
      throw new DomainError('product_not_found', `No product ${input.productId} exists.`, {
        fieldErrors: [{ pointer: '#/productId', detail: 'No such product.' }],
      })
    }
    const entitlements = await this.#entitlements.resolve(
      input.productId,
      input.entitlements ?? [],
      '#/entitlements',
    )
    const now = this.#clock.now()
    const record = {
      id: newId('policy'),
      productId: input.productId,
      name: input.name,
      // Not `??`: null means unlimited (or never expires) and must not become the default.
      maxActivations: input.maxActivations === undefined ? defaultMaxActivations : input.maxActivations,
      duration: input.duration === undefined ? null : input.duration,
      expirationBasis: input.expirationBasis ?? defaultExpirationBasis,
      // Absent and null both mean "none" here: no lease, unmetered (as on licenses).
      heartbeatTtl: input.heartbeatTtl ?? null,
      maxUses: input.maxUses ?? null,
      metadata: newMetadata(input.metadata),
      // Not `??`: null means files that never expire (or the standard token cap).
      licenseFileTtl: input.licenseFileTtl === undefined ? defaultPolicyLicenseFileTtl : input.licenseFileTtl,
      tokenTtlMax: input.tokenTtlMax ?? null,
      licenseFileMetadata: input.licenseFileMetadata ?? false,
      // Not `??`: null means unlimited.
      maxTransfers: input.maxTransfers === undefined ? defaultMaxTransfers : input.maxTransfers,
      transferPeriod: input.transferPeriod ?? defaultTransferPeriod,
      // Absent and null both mean none: no check-in, the application's own grace period.
      checkInInterval: input.checkInInterval ?? null,
      gracePeriod: input.gracePeriod ?? null,
      seatsPerQuantity: input.seatsPerQuantity ?? false,
      createdAt: now,
      updatedAt: now,
    }
    return this.#storage.write(principal, async ({ policies, events }) => {
      const policy = await policies.insert(
        record,
        entitlements.map((entitlement) => entitlement.id),
      )
      if (policy === 'reference_gone') {
        throw entitlementGone()
      }
      events.record('policy.created', policy.productId, toPolicyResource(policy))
      return policy
    })
  }

  async get(principal: Principal, id: PolicyId): Promise<Policy> {
    requireManagementKey(principal)
    return this.#visible(principal, id)
  }

  /** Licenses made from it keep their seats and dates; its entitlements are live on them. */
  async update(principal: Principal, id: PolicyId, input: UpdatePolicyBody): Promise<Policy> {
    requireManagementKey(principal)
    const current = await this.#visible(principal, id)
    const { entitlements: codes, metadata, ...fields } = input
    if (Object.keys(fields).length === 0 && codes === undefined && metadata === undefined) {
      return current
    }
    const entitlements =
      codes === undefined
        ? undefined
        : await this.#entitlements.resolve(current.productId, codes, '#/entitlements')
    const changes = {
      updatedAt: this.#clock.now(),
      ...fields,
      ...(metadata === undefined ? {} : { metadata: mergeMetadata(current.metadata, metadata) }),
      ...(entitlements === undefined
        ? {}
        : { entitlementIds: entitlements.map((entitlement) => entitlement.id) }),
    }
    return this.#storage.write(principal, async ({ policies, events }) => {
      const updated = await policies.update(id, changes)
      if (updated === 'reference_gone') {
        throw entitlementGone()
      }
      if (updated === undefined) {
        throw policyNotFound(id)
      }
      events.record('policy.updated', updated.productId, toPolicyResource(updated))
      return updated
    })
  }

  /** Refused (409 `policy_in_use`) while licenses made from it exist. */
  async delete(principal: Principal, id: PolicyId): Promise<void> {
    requireManagementKey(principal)
    const current = await this.#visible(principal, id)
    await this.#storage.write(principal, async ({ policies, events }) => {
      const outcome = await policies.delete(id)
      if (outcome === undefined) {
        throw policyNotFound(id)
      }
      if (outcome === 'in_use') {
        throw new DomainError('policy_in_use', `Licenses were made from policy ${id}; it cannot be deleted.`)
      }
      events.record('policy.deleted', current.productId, toPolicyResource(current))
    })
  }

  async list(principal: Principal, query: ListPoliciesQuery): Promise<Paginated<Policy>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, policyListSpec)
    const scope = scopedProductId(principal)
    if (scope !== undefined && query.productId !== undefined && query.productId !== scope) {
      return toPage({ items: [], totalCount: 0, offset: 0 }, request.limit, request.page ?? 0)
    }
    const slice = await this.#policies.list(request, scope ?? query.productId)
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /** For licenses: a policy by id, regardless of the caller (licenses check its product). */
  async findPolicy(id: PolicyId): Promise<Policy | undefined> {
    return this.#policies.findById(id)
  }

  /** For validations, tokens and files: only the check-in fields, regardless of the caller. */
  async findCheckIn(id: PolicyId): Promise<CheckInPolicy | undefined> {
    return this.#policies.findCheckIn(id)
  }

  async #visible(principal: Principal, id: PolicyId): Promise<Policy> {
    const policy = await this.#policies.findById(id)
    if (policy === undefined || !canSeeProduct(principal, policy.productId)) {
      throw policyNotFound(id)
    }
    return policy
  }
}

function policyNotFound(id: PolicyId): DomainError {
  return new DomainError('policy_not_found', `No policy ${id} is visible to this API key.`)
}

/** An entitlement named in the request was deleted between its lookup and the write. */
function entitlementGone(): InvalidInputError {
  return new InvalidInputError(
    '#/entitlements',
    'An entitlement listed was deleted meanwhile; nothing changed.',
  )
}
