import { maxFailuresListed, type StatsFailures, type StatsFailuresQuery } from '@keyturn/protocol'
import { DomainError } from '../core/errors.js'
import { canSeeProduct, type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import type { RefusalLog } from '../protection/refusal-log.js'
import type { FailuresStore } from './failures-store.js'

/**
 * The overview's latest failures: webhook deliveries failing (stored) and the clients the rate
 * limits refused (this process's `RefusalLog`, in memory), scoped like `GET /stats`.
 */
export class FailuresService {
  readonly #store: FailuresStore
  readonly #refusals: RefusalLog
  readonly #products: ProductLookup

  constructor(deps: {
    readonly store: FailuresStore
    readonly refusals: RefusalLog
    readonly products: ProductLookup
  }) {
    this.#store = deps.store
    this.#refusals = deps.refusals
    this.#products = deps.products
  }

  async latest(principal: Principal, query: StatsFailuresQuery): Promise<StatsFailures> {
    requireManagementKey(principal)
    const productId = query.productId ?? scopedProductId(principal)
    if (
      productId !== undefined &&
      (!canSeeProduct(principal, productId) || (await this.#products.findProduct(productId)) === undefined)
    ) {
      throw new DomainError('product_not_found', `No product ${productId} is visible to this API key.`)
    }
    const webhookDeliveries = await this.#store.failingDeliveries(
      maxFailuresListed,
      productId === undefined ? undefined : { productId, ownEndpointsOnly: principal.role !== 'admin' },
    )
    return {
      object: 'StatsFailures',
      productId: productId ?? null,
      webhookDeliveries,
      rateLimited: this.#refusals.latest(maxFailuresListed, productId),
      rateLimitedSince: this.#refusals.since.toISOString(),
    }
  }
}
