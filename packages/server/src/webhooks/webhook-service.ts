import type {
  CreateWebhookEndpointBody,
  ListWebhookDeliveriesQuery,
  ListWebhookEndpointsQuery,
  Paginated,
  UpdateWebhookEndpointBody,
  WebhookDeliveryId,
  WebhookEndpointId,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { canSeeProduct, type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import { encryptText } from '../core/secrets.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import type { WebhookDelivery } from './webhook-delivery.js'
import { checkWebhookUrl, newWebhookSecret, type WebhookEndpoint } from './webhook-endpoint.js'
import { toWebhookEndpointResource } from './webhook-resource.js'
import { deliveryListSpec, endpointListSpec, type WebhookStore } from './webhook-store.js'

export interface WebhookServiceDeps {
  readonly webhooks: WebhookStore
  readonly storage: UnitOfWork<{ readonly webhooks: WebhookStore }>
  readonly products: ProductLookup
  readonly clock: Clock
  /** Encrypts endpoint secrets at rest. */
  readonly secretEncryption: Buffer
  readonly allowHttp: boolean
  /** Called after endpoints change, so this process's validation-event switch follows at once. */
  readonly onEndpointsChanged: () => Promise<void>
}

export interface EndpointWithSecret {
  readonly endpoint: WebhookEndpoint
  readonly secret: string
}

/** Webhook endpoints and their delivery log: admin keys manage all, product keys their product's. */
export class WebhookService {
  readonly #webhooks: WebhookStore
  readonly #storage: UnitOfWork<{ readonly webhooks: WebhookStore }>
  readonly #products: ProductLookup
  readonly #clock: Clock
  readonly #secretEncryption: Buffer
  readonly #allowHttp: boolean
  readonly #onEndpointsChanged: () => Promise<void>

  constructor(deps: WebhookServiceDeps) {
    this.#webhooks = deps.webhooks
    this.#storage = deps.storage
    this.#products = deps.products
    this.#clock = deps.clock
    this.#secretEncryption = deps.secretEncryption
    this.#allowHttp = deps.allowHttp
    this.#onEndpointsChanged = deps.onEndpointsChanged
  }

  async create(principal: Principal, input: CreateWebhookEndpointBody): Promise<EndpointWithSecret> {
    requireManagementKey(principal)
    const productId = input.productId ?? scopedProductId(principal) ?? null
    if (productId === null ? principal.role !== 'admin' : !canSeeProduct(principal, productId)) {
      throw new DomainError('forbidden', 'A product key may only create endpoints for its own product.')
    }
    if (productId !== null && (await this.#products.findProduct(productId)) === undefined) {
      throw new DomainError('product_not_found', `No product ${productId} exists.`, {
        fieldErrors: [{ pointer: '#/productId', detail: 'No such product.' }],
      })
    }
    checkWebhookUrl(input.url, this.#allowHttp)
    const now = this.#clock.now()
    const secret = newWebhookSecret()
    const endpoint: WebhookEndpoint = {
      id: newId('webhookEndpoint'),
      url: input.url,
      description: input.description ?? null,
      eventTypes: input.eventTypes,
      productId,
      disabledAt: input.enabled === false ? now : null,
      failingSince: null,
      createdAt: now,
      updatedAt: now,
    }
    await this.#storage.write(principal, async ({ webhooks, events }) => {
      await webhooks.insertEndpoint(endpoint, encryptText(this.#secretEncryption, secret))
      events.record('webhook_endpoint.created', productId, toWebhookEndpointResource(endpoint))
    })
    await this.#onEndpointsChanged()
    return { endpoint, secret }
  }

  async get(principal: Principal, id: WebhookEndpointId): Promise<WebhookEndpoint> {
    requireManagementKey(principal)
    return this.#visible(principal, id)
  }

  async list(principal: Principal, query: ListWebhookEndpointsQuery): Promise<Paginated<WebhookEndpoint>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, endpointListSpec)
    const slice = await this.#webhooks.listEndpoints(request, scopedProductId(principal))
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  async update(
    principal: Principal,
    id: WebhookEndpointId,
    input: UpdateWebhookEndpointBody,
  ): Promise<WebhookEndpoint> {
    requireManagementKey(principal)
    const current = await this.#visible(principal, id)
    if (input.url !== undefined) {
      checkWebhookUrl(input.url, this.#allowHttp)
    }
    const now = this.#clock.now()
    const isEnabled = current.disabledAt === null
    const updated = await this.#storage.write(principal, async ({ webhooks, events }) => {
      const endpoint = await webhooks.updateEndpoint(id, {
        updatedAt: now,
        ...(input.url === undefined ? {} : { url: input.url }),
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.eventTypes === undefined ? {} : { eventTypes: input.eventTypes }),
        ...(input.enabled === undefined || input.enabled === isEnabled
          ? {}
          : // Enabling starts a fresh failure streak, so an endpoint is not disabled again at once.
            { disabledAt: input.enabled ? null : now, failingSince: null }),
      })
      if (endpoint === undefined) {
        throw endpointNotFound(id)
      }
      events.record('webhook_endpoint.updated', endpoint.productId, toWebhookEndpointResource(endpoint))
      return endpoint
    })
    await this.#onEndpointsChanged()
    return updated
  }

  async delete(principal: Principal, id: WebhookEndpointId): Promise<void> {
    requireManagementKey(principal)
    await this.#visible(principal, id)
    await this.#storage.write(principal, async ({ webhooks, events }) => {
      const deleted = await webhooks.deleteEndpoint(id)
      if (deleted === undefined) {
        throw endpointNotFound(id)
      }
      events.record('webhook_endpoint.deleted', deleted.productId, toWebhookEndpointResource(deleted))
    })
    await this.#onEndpointsChanged()
  }

  /** A new secret; the old one stops signing at once. */
  async rotateSecret(principal: Principal, id: WebhookEndpointId): Promise<EndpointWithSecret> {
    requireManagementKey(principal)
    await this.#visible(principal, id)
    const secret = newWebhookSecret()
    const now = this.#clock.now()
    const endpoint = await this.#storage.write(principal, async ({ webhooks, events }) => {
      const endpoint = await webhooks.updateEndpoint(id, {
        secretEncrypted: encryptText(this.#secretEncryption, secret),
        updatedAt: now,
      })
      if (endpoint === undefined) {
        throw endpointNotFound(id)
      }
      events.record('webhook_endpoint.updated', endpoint.productId, toWebhookEndpointResource(endpoint))
      return endpoint
    })
    return { endpoint, secret }
  }

  /** Records a `webhook_endpoint.test` event, which is delivered to this endpoint only. */
  async sendTest(principal: Principal, id: WebhookEndpointId): Promise<WebhookEndpoint> {
    requireManagementKey(principal)
    const endpoint = await this.#visible(principal, id)
    if (endpoint.disabledAt !== null) {
      throw new InvalidInputError('#/', 'The endpoint is disabled; enable it first (PATCH enabled: true).')
    }
    await this.#storage.write(principal, async ({ events }) => {
      events.record('webhook_endpoint.test', endpoint.productId, toWebhookEndpointResource(endpoint))
    })
    return endpoint
  }

  async listDeliveries(
    principal: Principal,
    id: WebhookEndpointId,
    query: ListWebhookDeliveriesQuery,
  ): Promise<Paginated<WebhookDelivery>> {
    requireManagementKey(principal)
    await this.#visible(principal, id)
    const request = parseListQuery(query, deliveryListSpec)
    const slice = await this.#webhooks.listDeliveries(id, request)
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /** Sends a delivery again as soon as a worker gets to it (within a second or so). */
  async retryDelivery(principal: Principal, id: WebhookDeliveryId): Promise<WebhookDelivery> {
    requireManagementKey(principal)
    const delivery = await this.#webhooks.findDelivery(id)
    const endpoint =
      delivery === undefined ? undefined : await this.#webhooks.findEndpoint(delivery.endpointId)
    if (delivery === undefined || endpoint === undefined || !isVisible(principal, endpoint)) {
      throw new DomainError(
        'webhook_delivery_not_found',
        `No webhook delivery ${id} is visible to this API key.`,
      )
    }
    const retried = await this.#webhooks.retryDelivery(id, this.#clock.now())
    if (retried === undefined) {
      throw new DomainError('webhook_delivery_not_found', `No webhook delivery ${id} exists.`)
    }
    return retried
  }

  async #visible(principal: Principal, id: WebhookEndpointId): Promise<WebhookEndpoint> {
    const endpoint = await this.#webhooks.findEndpoint(id)
    if (endpoint === undefined || !isVisible(principal, endpoint)) {
      throw endpointNotFound(id)
    }
    return endpoint
  }
}

/** A product key sees its product's endpoints; global endpoints (all products) are admin only. */
function isVisible(principal: Principal, endpoint: WebhookEndpoint): boolean {
  return endpoint.productId === null
    ? principal.role === 'admin'
    : canSeeProduct(principal, endpoint.productId)
}

function endpointNotFound(id: WebhookEndpointId): DomainError {
  return new DomainError(
    'webhook_endpoint_not_found',
    `No webhook endpoint ${id} is visible to this API key.`,
  )
}
