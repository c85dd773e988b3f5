import {
  type ActivateByKeyBody,
  type ActivateLicenseBody,
  type ActivationId,
  type DeactivateByKeyBody,
  type LicenseId,
  type ListActivationsQuery,
  maxActivationMetadataBytes,
  type Paginated,
  type ProductId,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { canSeeProduct, type Principal, requireManagementKey } from '../core/principal.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import type { LicenseView } from '../licenses/license.js'
import type { Activation } from './activation.js'
import { type ActivationStore, activationListSpec } from './activation-store.js'
import { toActivationResource } from './routes/activation-resource.js'

/** What activations need of licenses, as the caller may see them (LicenseService fits). */
export interface LicenseFinder {
  get(principal: Principal, id: LicenseId): Promise<LicenseView>
  getByKey(principal: Principal, key: string, productId: ProductId): Promise<LicenseView>
  requireUsable(view: LicenseView, refusal: string): Promise<void>
}

export interface ActivationResult {
  /** `created`: a seat was taken (201); `existing`: the fingerprint was already activated (200). */
  readonly outcome: 'created' | 'existing'
  readonly activation: Activation
}

export interface ActivationServiceDeps {
  readonly activations: ActivationStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly activations: ActivationStore }>
  readonly licenses: LicenseFinder
  readonly clock: Clock
}

export class ActivationService {
  readonly #activations: ActivationStore
  readonly #storage: UnitOfWork<{ readonly activations: ActivationStore }>
  readonly #licenses: LicenseFinder
  readonly #clock: Clock

  constructor(deps: ActivationServiceDeps) {
    this.#activations = deps.activations
    this.#storage = deps.storage
    this.#licenses = deps.licenses
    this.#clock = deps.clock
  }

  async activate(
    principal: Principal,
    licenseId: LicenseId,
    input: ActivateLicenseBody,
  ): Promise<ActivationResult> {
    requireManagementKey(principal)
    return this.#activate(principal, await this.#licenses.get(principal, licenseId), input)
  }

  async activateByKey(principal: Principal, input: ActivateByKeyBody): Promise<ActivationResult> {
    const { key, productId, ...activation } = input
    return this.#activate(principal, await this.#licenses.getByKey(principal, key, productId), activation)
  }

  /** Frees the seat. */
  async deactivate(principal: Principal, id: ActivationId): Promise<void> {
    requireManagementKey(principal)
    await this.get(principal, id)
    await this.#deactivate(principal, id, `No activation ${id} exists.`)
  }

  async deactivateByKey(principal: Principal, input: DeactivateByKeyBody): Promise<void> {
    const { license } = await this.#licenses.getByKey(principal, input.key, input.productId)
    const activation = await this.#activations.findByFingerprint(license.id, input.fingerprint)
    const notActivated = 'This machine is not activated for this license.'
    if (activation === undefined) {
      throw activationNotFound(notActivated)
    }
    await this.#deactivate(principal, activation.id, notActivated)
  }

  async #deactivate(principal: Principal, id: ActivationId, notFound: string): Promise<void> {
    await this.#storage.write(principal, async ({ activations, events }) => {
      const deleted = await activations.deactivate(id)
      if (deleted === undefined) {
        throw activationNotFound(notFound)
      }
      events.record('activation.deleted', deleted.productId, toActivationResource(deleted))
    })
  }

  async get(principal: Principal, id: ActivationId): Promise<Activation> {
    requireManagementKey(principal)
    const activation = await this.#activations.findById(id)
    if (activation === undefined || !canSeeProduct(principal, activation.productId)) {
      throw activationNotFound(`No activation ${id} is visible to this API key.`)
    }
    return activation
  }

  async list(
    principal: Principal,
    licenseId: LicenseId,
    query: ListActivationsQuery,
  ): Promise<Paginated<Activation>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, activationListSpec)
    const { license } = await this.#licenses.get(principal, licenseId)
    const slice = await this.#activations.list(license.id, request)
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /** Whether a machine holds a seat of the license (validation with a fingerprint). */
  async isActivated(licenseId: LicenseId, fingerprint: string): Promise<boolean> {
    return (await this.#activations.findByFingerprint(licenseId, fingerprint)) !== undefined
  }

  async #activate(
    principal: Principal,
    view: LicenseView,
    input: ActivateLicenseBody,
  ): Promise<ActivationResult> {
    const { license } = view
    if (input.metadata !== undefined && byteLength(input.metadata) > maxActivationMetadataBytes) {
      throw new InvalidInputError(
        '#/metadata',
        `metadata must be at most ${maxActivationMetadataBytes} bytes as JSON.`,
      )
    }
    await this.#licenses.requireUsable(view, 'it cannot be activated')
    const outcome = await this.#storage.write(principal, async ({ activations, events }) => {
      const outcome = await activations.activate({
        id: newId('activation'),
        licenseId: license.id,
        productId: license.productId,
        fingerprint: input.fingerprint,
        name: input.name ?? null,
        metadata: input.metadata ?? null,
        at: this.#clock.now(),
      })
      // A repeat activation only refreshes lastSeenAt: not an event (it is a heartbeat, not a change).
      if (outcome.kind === 'created') {
        events.record('activation.created', license.productId, toActivationResource(outcome.activation))
      }
      return outcome
    })
    if (outcome.kind === 'limit_reached') {
      throw new DomainError(
        'activation_limit_reached',
        `License ${license.id} has all ${outcome.limit} activations in use; deactivate a machine first.`,
        { extensions: { maxActivations: outcome.limit, activationCount: outcome.count } },
      )
    }
    return { outcome: outcome.kind, activation: outcome.activation }
  }
}

function activationNotFound(detail: string): DomainError {
  return new DomainError('activation_not_found', detail)
}

function byteLength(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length
}
