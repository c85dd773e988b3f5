import type {
  CreateIntegrationBody,
  IntegrationId,
  IntegrationMapping,
  UpdateIntegrationBody,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { type Principal, requireManagementKey } from '../core/principal.js'
import { encryptText } from '../core/secrets.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import {
  checkMappingsUnique,
  type Integration,
  integrationDefaults,
  toIntegrationResource,
} from './integration.js'
import { type IntegrationStore, maxIntegrations, type ReceivedEvent } from './integration-store.js'

/** What the integrations need of policies: a policy's product, to check a mapping. */
export interface PolicyProductLookup {
  findPolicy(id: string): Promise<{ readonly productId: string } | undefined>
}

export interface IntegrationServiceDeps {
  readonly integrations: IntegrationStore
  readonly storage: UnitOfWork<{ readonly integrations: IntegrationStore }>
  readonly policies: PolicyProductLookup
  readonly clock: Clock
  /** Encrypts signing secrets at rest. */
  readonly secretEncryption: Buffer
}

export function integrationNotFound(id: string): DomainError {
  return new DomainError('integration_not_found', `No integration ${id} exists.`)
}

/** Payment-provider integrations: admin keys only (they create customers and licenses in every product). */
export class IntegrationService {
  readonly #integrations: IntegrationStore
  readonly #storage: UnitOfWork<{ readonly integrations: IntegrationStore }>
  readonly #policies: PolicyProductLookup
  readonly #clock: Clock
  readonly #secretEncryption: Buffer

  constructor(deps: IntegrationServiceDeps) {
    this.#integrations = deps.integrations
    this.#storage = deps.storage
    this.#policies = deps.policies
    this.#clock = deps.clock
    this.#secretEncryption = deps.secretEncryption
  }

  async create(principal: Principal, input: CreateIntegrationBody): Promise<Integration> {
    requireAdmin(principal)
    const mappings = input.mappings ?? []
    await this.#checkMappings(mappings)
    if ((await this.#integrations.count()) >= maxIntegrations) {
      throw new DomainError('validation_failed', `A server keeps at most ${maxIntegrations} integrations.`)
    }
    const now = this.#clock.now()
    const integration: Integration = {
      id: newId('integration'),
      provider: input.provider,
      description: input.description ?? null,
      mappings,
      onRefund: input.onRefund ?? integrationDefaults.onRefund,
      paymentGraceDays: input.paymentGraceDays ?? integrationDefaults.paymentGraceDays,
      createdAt: now,
      updatedAt: now,
    }
    const secret = encryptText(this.#secretEncryption, input.signingSecret)
    await this.#storage.write(principal, async ({ integrations, events }) => {
      await integrations.insert(integration, secret)
      events.record('integration.created', null, toIntegrationResource(integration))
    })
    return integration
  }

  async get(principal: Principal, id: IntegrationId): Promise<Integration> {
    requireAdmin(principal)
    return this.#existing(id)
  }

  async list(principal: Principal): Promise<Integration[]> {
    requireAdmin(principal)
    return this.#integrations.list()
  }

  async recentEvents(principal: Principal, id: IntegrationId, limit: number): Promise<ReceivedEvent[]> {
    requireAdmin(principal)
    await this.#existing(id)
    return this.#integrations.recentEvents(id, limit)
  }

  async update(principal: Principal, id: IntegrationId, input: UpdateIntegrationBody): Promise<Integration> {
    requireAdmin(principal)
    await this.#existing(id)
    if (input.mappings !== undefined) {
      await this.#checkMappings(input.mappings)
    }
    const now = this.#clock.now()
    return this.#storage.write(principal, async ({ integrations, events }) => {
      const updated = await integrations.update(id, {
        updatedAt: now,
        ...(input.description === undefined ? {} : { description: input.description }),
        ...(input.mappings === undefined ? {} : { mappings: input.mappings }),
        ...(input.onRefund === undefined ? {} : { onRefund: input.onRefund }),
        ...(input.paymentGraceDays === undefined ? {} : { paymentGraceDays: input.paymentGraceDays }),
        ...(input.signingSecret === undefined
          ? {}
          : { signingSecretEncrypted: encryptText(this.#secretEncryption, input.signingSecret) }),
      })
      if (updated === undefined) {
        throw integrationNotFound(id)
      }
      events.record('integration.updated', null, toIntegrationResource(updated))
      return updated
    })
  }

  async delete(principal: Principal, id: IntegrationId): Promise<void> {
    requireAdmin(principal)
    const current = await this.#existing(id)
    await this.#storage.write(principal, async ({ integrations, events }) => {
      if (!(await integrations.delete(id))) {
        throw integrationNotFound(id)
      }
      events.record('integration.deleted', null, toIntegrationResource(current))
    })
  }

  async #existing(id: IntegrationId): Promise<Integration> {
    const stored = await this.#integrations.find(id)
    if (stored === undefined) {
      throw integrationNotFound(id)
    }
    return stored.integration
  }

  /** Each item once, each policy existing and of the mapped product. */
  async #checkMappings(mappings: readonly IntegrationMapping[]): Promise<void> {
    checkMappingsUnique(mappings)
    for (const [index, mapping] of mappings.entries()) {
      const policy = await this.#policies.findPolicy(mapping.policyId)
      if (policy === undefined || policy.productId !== mapping.productId) {
        throw new DomainError(
          'policy_not_found',
          `No policy ${mapping.policyId} of product ${mapping.productId} exists.`,
          {
            fieldErrors: [
              { pointer: `#/mappings/${index}/policyId`, detail: 'No such policy in this product.' },
            ],
          },
        )
      }
    }
  }
}

function requireAdmin(principal: Principal): void {
  requireManagementKey(principal)
  if (principal.role !== 'admin') {
    throw new DomainError('forbidden', 'Integrations are managed with an admin key.')
  }
}
