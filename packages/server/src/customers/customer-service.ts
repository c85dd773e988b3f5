import type {
  CreateCustomerBody,
  CustomerId,
  ListCustomersQuery,
  Paginated,
  UpdateCustomerBody,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { mergeMetadata, newMetadata } from '../core/metadata.js'
import { type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import type { Customer } from './customer.js'
import { toCustomerResource } from './customer-resource.js'
import {
  type CustomerScope,
  type CustomerStore,
  type CustomerWrite,
  customerListSpec,
} from './customer-store.js'

export interface CustomerServiceDeps {
  readonly customers: CustomerStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly customers: CustomerStore }>
  readonly clock: Clock
}

/**
 * Customers are global (not per product): an admin key sees them all; a product key may create
 * them and sees those owning at least one license of its product; client keys none.
 */
export class CustomerService {
  readonly #customers: CustomerStore
  readonly #storage: UnitOfWork<{ readonly customers: CustomerStore }>
  readonly #clock: Clock

  constructor(deps: CustomerServiceDeps) {
    this.#customers = deps.customers
    this.#storage = deps.storage
    this.#clock = deps.clock
  }

  async create(principal: Principal, input: CreateCustomerBody): Promise<Customer> {
    requireManagementKey(principal)
    const now = this.#clock.now()
    const metadata = newMetadata(input.metadata)
    return this.#storage.write(principal, async ({ customers, events }) => {
      const customer = written(
        await customers.insert({
          id: newId('customer'),
          email: input.email,
          name: input.name ?? null,
          metadata,
          mailOptOut: input.mailOptOut ?? false,
          createdAt: now,
          updatedAt: now,
        }),
        input.email,
      )
      events.record('customer.created', null, toCustomerResource(customer))
      return customer
    })
  }

  async get(principal: Principal, id: CustomerId): Promise<Customer> {
    requireManagementKey(principal)
    return this.#visible(principal, id)
  }

  async update(principal: Principal, id: CustomerId, input: UpdateCustomerBody): Promise<Customer> {
    requireManagementKey(principal)
    const current = await this.#visible(principal, id)
    if (
      input.email === undefined &&
      input.name === undefined &&
      input.metadata === undefined &&
      input.mailOptOut === undefined
    ) {
      return current
    }
    const changes = {
      updatedAt: this.#clock.now(),
      ...(input.email === undefined ? {} : { email: input.email }),
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.mailOptOut === undefined ? {} : { mailOptOut: input.mailOptOut }),
      ...(input.metadata === undefined ? {} : { metadata: mergeMetadata(current.metadata, input.metadata) }),
    }
    return this.#storage.write(principal, async ({ customers, events }) => {
      const result = await customers.update(id, changes)
      if (result === undefined) {
        throw customerNotFound(id)
      }
      const customer = written(result, input.email ?? current.email)
      events.record('customer.updated', null, toCustomerResource(customer))
      return customer
    })
  }

  /** Refused (409 `customer_has_licenses`) while any license belongs to the customer. */
  async delete(principal: Principal, id: CustomerId): Promise<void> {
    requireManagementKey(principal)
    const current = await this.#visible(principal, id)
    await this.#storage.write(principal, async ({ customers, events }) => {
      const outcome = await customers.delete(id)
      if (outcome === undefined) {
        throw customerNotFound(id)
      }
      if (outcome === 'has_licenses') {
        throw new DomainError(
          'customer_has_licenses',
          `Customer ${id} owns licenses; detach them (customerId: null) or delete them first.`,
        )
      }
      events.record('customer.deleted', null, toCustomerResource(current))
    })
  }

  async list(principal: Principal, query: ListCustomersQuery): Promise<Paginated<Customer>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, customerListSpec)
    const slice = await this.#customers.list(request, scopeOf(principal))
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /** For licenses: whether a customer exists (any caller may attach one it knows the id of). */
  async exists(id: CustomerId): Promise<boolean> {
    return (await this.#customers.findById(id, undefined)) !== undefined
  }

  async #visible(principal: Principal, id: CustomerId): Promise<Customer> {
    const customer = await this.#customers.findById(id, scopeOf(principal))
    if (customer === undefined) {
      throw customerNotFound(id)
    }
    return customer
  }
}

function scopeOf(principal: Principal): CustomerScope {
  const productId = scopedProductId(principal)
  return productId === undefined ? undefined : { productId }
}

function written(result: CustomerWrite, email: string): Customer {
  if (result.kind === 'email_taken') {
    throw new DomainError('customer_email_taken', `A customer with the email ${email} exists already.`, {
      fieldErrors: [{ pointer: '#/email', detail: 'Another customer has this email.' }],
    })
  }
  return result.customer
}

function customerNotFound(id: CustomerId): DomainError {
  return new DomainError('customer_not_found', `No customer ${id} is visible to this API key.`)
}
