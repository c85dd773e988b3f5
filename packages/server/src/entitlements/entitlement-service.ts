import type {
  CreateEntitlementBody,
  EntitlementId,
  ListEntitlementsQuery,
  Paginated,
  ProductId,
  UpdateEntitlementBody,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { canSeeProduct, type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import type { Entitlement } from './entitlement.js'
import { toEntitlementResource } from './entitlement-resource.js'
import { type EntitlementStore, type EntitlementWrite, entitlementListSpec } from './entitlement-store.js'

export interface EntitlementServiceDeps {
  readonly entitlements: EntitlementStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly entitlements: EntitlementStore }>
  readonly products: ProductLookup
  readonly clock: Clock
}

/** Entitlements belong to a product: product keys manage their own product's; client keys none. */
export class EntitlementService {
  readonly #entitlements: EntitlementStore
  readonly #storage: UnitOfWork<{ readonly entitlements: EntitlementStore }>
  readonly #products: ProductLookup
  readonly #clock: Clock

  constructor(deps: EntitlementServiceDeps) {
    this.#entitlements = deps.entitlements
    this.#storage = deps.storage
    this.#products = deps.products
    this.#clock = deps.clock
  }

  async create(principal: Principal, input: CreateEntitlementBody): Promise<Entitlement> {
    requireManagementKey(principal)
    if (!canSeeProduct(principal, input.productId)) {
      throw new DomainError('forbidden', 'This API key may only create entitlements for its own product.')
    }
    if ((await this.#products.findProduct(input.productId)) === undefined) {
      throw new DomainError('product_not_found', `No product ${input.productId} exists.`, {
        fieldErrors: [{ pointer: '#/productId', detail: 'No such product.' }],
      })
    }
    const now = this.#clock.now()
    return this.#storage.write(principal, async ({ entitlements, events }) => {
      const entitlement = written(
        await entitlements.insert({
          id: newId('entitlement'),
          productId: input.productId,
          code: input.code,
          name: input.name,
          createdAt: now,
          updatedAt: now,
        }),
        input.code,
      )
      events.record('entitlement.created', entitlement.productId, toEntitlementResource(entitlement))
      return entitlement
    })
  }

  async get(principal: Principal, id: EntitlementId): Promise<Entitlement> {
    requireManagementKey(principal)
    return this.#visible(principal, id)
  }

  async update(principal: Principal, id: EntitlementId, input: UpdateEntitlementBody): Promise<Entitlement> {
    requireManagementKey(principal)
    const current = await this.#visible(principal, id)
    if (input.code === undefined && input.name === undefined) {
      return current
    }
    const changes = { updatedAt: this.#clock.now(), ...input }
    return this.#storage.write(principal, async ({ entitlements, events }) => {
      const result = await entitlements.update(id, changes)
      if (result === undefined) {
        throw entitlementNotFound(id)
      }
      const entitlement = written(result, input.code ?? current.code)
      events.record('entitlement.updated', entitlement.productId, toEntitlementResource(entitlement))
      return entitlement
    })
  }

  /** Detaches it from every policy and license. */
  async delete(principal: Principal, id: EntitlementId): Promise<void> {
    requireManagementKey(principal)
    const current = await this.#visible(principal, id)
    await this.#storage.write(principal, async ({ entitlements, events }) => {
      if (!(await entitlements.delete(id))) {
        throw entitlementNotFound(id)
      }
      events.record('entitlement.deleted', current.productId, toEntitlementResource(current))
    })
  }

  async list(principal: Principal, query: ListEntitlementsQuery): Promise<Paginated<Entitlement>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, entitlementListSpec)
    const scope = scopedProductId(principal)
    if (scope !== undefined && query.productId !== undefined && query.productId !== scope) {
      return toPage({ items: [], totalCount: 0, offset: 0 }, request.limit, request.page ?? 0)
    }
    const slice = await this.#entitlements.list(request, scope ?? query.productId)
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /**
   * The entitlements a license or policy of `productId` names by code; unknown codes are a 400
   * naming them (at `pointer`).
   */
  async resolve(productId: ProductId, codes: readonly string[], pointer: string): Promise<Entitlement[]> {
    const found = await this.#entitlements.findByCodes(productId, codes)
    const known = new Set(found.map((entitlement) => entitlement.code))
    const unknown = codes.filter((code) => !known.has(code))
    if (unknown.length > 0) {
      throw new InvalidInputError(
        pointer,
        `Product ${productId} has no entitlement with the code${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}.`,
      )
    }
    return found
  }

  async #visible(principal: Principal, id: EntitlementId): Promise<Entitlement> {
    const entitlement = await this.#entitlements.findById(id)
    if (entitlement === undefined || !canSeeProduct(principal, entitlement.productId)) {
      throw entitlementNotFound(id)
    }
    return entitlement
  }
}

function written(result: EntitlementWrite, code: string): Entitlement {
  if (result.kind === 'code_taken') {
    throw new DomainError('entitlement_code_taken', `The product already has an entitlement "${code}".`, {
      fieldErrors: [{ pointer: '#/code', detail: 'Taken by another entitlement of this product.' }],
    })
  }
  return result.entitlement
}

function entitlementNotFound(id: EntitlementId): DomainError {
  return new DomainError('entitlement_not_found', `No entitlement ${id} is visible to this API key.`)
}
