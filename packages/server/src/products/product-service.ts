import {
  type ApiKeyId,
  type CreateProductBody,
  defaultClientTokenTtlSeconds,
  type ListProductsQuery,
  noBranding,
  type Paginated,
  type ProductId,
  type UpdateProductBody,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { mergeMetadata, newMetadata } from '../core/metadata.js'
import {
  canSeeProduct,
  type Principal,
  requireAdmin,
  requireManagementKey,
  scopedProductId,
} from '../core/principal.js'
import type { ProductFacts } from '../core/product-lookup.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import { newSigningKey } from '../tokens/signing-keys.js'
import type { Product, ProductView } from './product.js'
import { toProductResource } from './product-resource.js'
import { type ProductChanges, type ProductStore, productListSpec } from './product-store.js'

export interface ProductServiceDeps {
  readonly products: ProductStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly products: ProductStore }>
  readonly clock: Clock
  /** Encrypts new signing keys at rest. */
  readonly signingKeyEncryption: Buffer
  /** Told after a product changed (caches of product settings elsewhere forget it). */
  readonly onChange?: (id: ProductId) => void
}

export class ProductService {
  readonly #products: ProductStore
  readonly #storage: UnitOfWork<{ readonly products: ProductStore }>
  readonly #clock: Clock
  readonly #signingKeyEncryption: Buffer
  readonly #onChange: (id: ProductId) => void

  constructor(deps: ProductServiceDeps) {
    this.#products = deps.products
    this.#storage = deps.storage
    this.#clock = deps.clock
    this.#signingKeyEncryption = deps.signingKeyEncryption
    this.#onChange = deps.onChange ?? (() => {})
  }

  async create(principal: Principal, input: CreateProductBody): Promise<ProductView> {
    requireAdmin(principal, 'create products')
    requireName(input.name)
    const now = this.#clock.now()
    const product: Product = {
      id: newId('product'),
      name: input.name,
      suspendedAt: null,
      clientTokenTtl: input.clientTokenTtl ?? defaultClientTokenTtlSeconds,
      signResponses: input.signResponses ?? false,
      branding: { ...noBranding, ...input.branding },
      metadata: newMetadata(input.metadata),
      createdAt: now,
      updatedAt: now,
    }
    const key = newSigningKey(this.#signingKeyEncryption)
    return this.#storage.write(principal, async ({ products, events }) => {
      const view = await products.insert(product, key)
      events.record('product.created', product.id, toProductResource(view))
      return view
    })
  }

  async get(principal: Principal, id: ProductId): Promise<ProductView> {
    requireManagementKey(principal)
    return this.#visible(principal, id)
  }

  async update(principal: Principal, id: ProductId, input: UpdateProductBody): Promise<ProductView> {
    const current = await this.#visible(principal, id)
    requireAdmin(principal, 'change products')
    if (
      input.name === undefined &&
      input.clientTokenTtl === undefined &&
      input.signResponses === undefined &&
      input.branding === undefined &&
      input.metadata === undefined
    ) {
      return current
    }
    if (input.name !== undefined) {
      requireName(input.name)
    }
    return this.#apply(principal, 'product.updated', id, {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.clientTokenTtl === undefined ? {} : { clientTokenTtl: input.clientTokenTtl }),
      ...(input.signResponses === undefined ? {} : { signResponses: input.signResponses }),
      ...(input.branding === undefined
        ? {}
        : { branding: { ...current.product.branding, ...input.branding } }),
      updatedAt: this.#clock.now(),
      ...(input.metadata === undefined
        ? {}
        : { metadata: mergeMetadata(current.product.metadata, input.metadata) }),
    })
  }

  /** Idempotent. Licenses of a suspended product validate with reason `suspended`. */
  async suspend(principal: Principal, id: ProductId): Promise<ProductView> {
    const current = await this.#visible(principal, id)
    requireAdmin(principal, 'suspend products')
    if (current.product.suspendedAt !== null) {
      return current
    }
    const now = this.#clock.now()
    return this.#apply(principal, 'product.suspended', id, { suspendedAt: now, updatedAt: now })
  }

  /** Idempotent. */
  async resume(principal: Principal, id: ProductId): Promise<ProductView> {
    const current = await this.#visible(principal, id)
    requireAdmin(principal, 'resume products')
    if (current.product.suspendedAt === null) {
      return current
    }
    return this.#apply(principal, 'product.resumed', id, { suspendedAt: null, updatedAt: this.#clock.now() })
  }

  async list(principal: Principal, query: ListProductsQuery): Promise<Paginated<ProductView>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, productListSpec)
    const slice = await this.#products.list({ request, productId: scopedProductId(principal) })
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /** For licenses and tokens (ProductLookup): what they need of a product, regardless of the caller. */
  async findProduct(id: ProductId): Promise<ProductFacts | undefined> {
    const product = await this.#products.findProductOnly(id)
    return product === undefined ? undefined : factsOf(product)
  }

  async findProductConfirming(
    id: ProductId,
    apiKeyId: ApiKeyId | undefined,
  ): Promise<ProductFacts | 'api_key_gone' | undefined> {
    const product = await this.#products.findProductConfirming(id, apiKeyId)
    return product === undefined || product === 'api_key_gone' ? product : factsOf(product)
  }

  async #visible(principal: Principal, id: ProductId): Promise<ProductView> {
    const view = canSeeProduct(principal, id) ? await this.#products.findById(id) : undefined
    if (view === undefined) {
      throw productNotFound(id)
    }
    return view
  }

  async #apply(
    principal: Principal,
    type: 'product.updated' | 'product.suspended' | 'product.resumed',
    id: ProductId,
    changes: ProductChanges,
  ): Promise<ProductView> {
    const result = await this.#storage.write(principal, async ({ products, events }) => {
      const updated = await products.update(id, changes)
      if (updated === undefined) {
        throw productNotFound(id)
      }
      events.record(type, id, toProductResource(updated))
      return updated
    })
    this.#onChange(id)
    return result
  }
}

function productNotFound(id: ProductId): DomainError {
  return new DomainError('product_not_found', `No product ${id} is visible to this API key.`)
}

/** A name of only spaces would show as nothing in every list: refuse it like a missing one. */
function requireName(name: string): void {
  if (name.trim() === '') {
    throw new InvalidInputError('#/name', 'name must not be blank.')
  }
}

function factsOf(product: Product): ProductFacts {
  return {
    id: product.id,
    isSuspended: product.suspendedAt !== null,
    clientTokenTtl: product.clientTokenTtl,
    signResponses: product.signResponses,
  }
}
