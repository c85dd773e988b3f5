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
import type { LicenseView } from '../licenses/license.js'
import type { Activation } from './activation.js'
import { type ActivationStore, activationListSpec } from './activation-store.js'

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
  readonly licenses: LicenseFinder
  readonly clock: Clock
}

export class ActivationService {
  readonly #activations: ActivationStore
  readonly #licenses: LicenseFinder
  readonly #clock: Clock

  constructor(deps: ActivationServiceDeps) {
    this.#activations = deps.activations
    this.#licenses = deps.licenses
    this.#clock = deps.clock
  }

  async activate(
    principal: Principal,
    licenseId: LicenseId,
    input: ActivateLicenseBody,
  ): Promise<ActivationResult> {
    requireManagementKey(principal)
    return this.#activate(await this.#licenses.get(principal, licenseId), input)
  }

  async activateByKey(principal: Principal, input: ActivateByKeyBody): Promise<ActivationResult> {
    const { key, productId, ...activation } = input
    return this.#activate(await this.#licenses.getByKey(principal, key, productId), activation)
  }

  /** Frees the seat. */
  async deactivate(principal: Principal, id: ActivationId): Promise<void> {
    requireManagementKey(principal)
    await this.get(principal, id)
    if ((await this.#activations.deactivate(id)) === undefined) {
      throw activationNotFound(`No activation ${id} exists.`)
    }
  }

  async deactivateByKey(principal: Principal, input: DeactivateByKeyBody): Promise<void> {
    const { license } = await this.#licenses.getByKey(principal, input.key, input.productId)
    const activation = await this.#activations.findByFingerprint(license.id, input.fingerprint)
    if (activation === undefined || (await this.#activations.deactivate(activation.id)) === undefined) {
      throw activationNotFound('This machine is not activated for this license.')
    }
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

  async #activate(view: LicenseView, input: ActivateLicenseBody): Promise<ActivationResult> {
    const { license } = view
    if (input.metadata !== undefined && byteLength(input.metadata) > maxActivationMetadataBytes) {
      throw new InvalidInputError(
        '#/metadata',
        `metadata must be at most ${maxActivationMetadataBytes} bytes as JSON.`,
      )
    }
    await this.#licenses.requireUsable(view, 'it cannot be activated')
    const outcome = await this.#activations.activate({
      id: newId('activation'),
      licenseId: license.id,
      productId: license.productId,
      fingerprint: input.fingerprint,
      name: input.name ?? null,
      metadata: input.metadata ?? null,
      at: this.#clock.now(),
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
