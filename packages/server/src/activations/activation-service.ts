import {
  type ActivateByKeyBody,
  type ActivateLicenseBody,
  type ActivationId,
  type DeactivateByKeyBody,
  type HeartbeatByKeyBody,
  type LicenseId,
  type ListActivationsQuery,
  type ListAllActivationsQuery,
  maxActivationMetadataBytes,
  type Paginated,
  type ProductId,
} from '@keyturn/protocol'
import { type ActivityCounts, countNothing } from '../core/activity-counts.js'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import { canSeeProduct, type Principal, requireManagementKey, scopedProductId } from '../core/principal.js'
import { type CustomerActor, isCustomerActor, type UnitOfWork } from '../core/unit-of-work.js'
import { type LicenseView, viewAt } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import type { UsableLicenses } from '../licenses/usable-licenses.js'
import { type Activation, newActivationAt } from './activation.js'
import { toActivationResource } from './activation-resource.js'
import {
  type ActivationStore,
  activationListSpec,
  allActivationsListSpec,
  type HeartbeatTarget,
} from './activation-store.js'

/** What activations need of licenses, as the caller may see them (LicenseService fits). */
export interface LicenseFinder extends UsableLicenses {
  /** A portal customer sees only their own licenses (LicenseService.get). */
  get(principal: Principal | CustomerActor, id: LicenseId): Promise<LicenseView>
  getByKey(principal: Principal, key: string, productId: ProductId): Promise<LicenseView>
}

export interface ActivationResult {
  /** `created`: a seat was taken (201); `existing`: the fingerprint was already activated (200). */
  readonly outcome: 'created' | 'existing'
  readonly activation: Activation
  /** Set when this first activation started the license's expiry (a `firstActivation` policy). */
  readonly expirationStarted: Date | null
}

export interface ActivationServiceDeps {
  readonly activations: ActivationStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly activations: ActivationStore }>
  readonly licenses: LicenseFinder
  /** Daily statistics: machines activated and deactivated; default none. */
  readonly counts?: ActivityCounts
  readonly clock: Clock
}

export class ActivationService {
  readonly #activations: ActivationStore
  readonly #storage: UnitOfWork<{ readonly activations: ActivationStore }>
  readonly #licenses: LicenseFinder
  readonly #counts: ActivityCounts
  readonly #clock: Clock

  constructor(deps: ActivationServiceDeps) {
    this.#activations = deps.activations
    this.#storage = deps.storage
    this.#licenses = deps.licenses
    this.#counts = deps.counts ?? countNothing
    this.#clock = deps.clock
  }

  async activate(
    principal: Principal,
    licenseId: LicenseId,
    input: ActivateLicenseBody,
  ): Promise<ActivationResult> {
    return this.#activate(
      principal,
      await this.#licenses.getUsable(principal, licenseId, cannotActivate),
      input,
    )
  }

  async activateByKey(principal: Principal, input: ActivateByKeyBody): Promise<ActivationResult> {
    const { key, productId, ...activation } = input
    return this.#activate(
      principal,
      await this.#licenses.getUsableByKey(principal, key, productId, cannotActivate),
      activation,
    )
  }

  /**
   * Takes a seat of a license the caller found usable, for a machine activated offline (offline/):
   * the same path, limit and transaction as online; its `activation.created` says `mode: "offline"`.
   * The caller is an API key or a customer in the portal (the event's actor).
   */
  async activateOffline(
    principal: Principal | CustomerActor,
    view: LicenseView,
    input: ActivateLicenseBody,
  ): Promise<ActivationResult> {
    return this.#activate(principal, view, input, 'offline')
  }

  /** Frees the seat. */
  async deactivate(principal: Principal, id: ActivationId): Promise<void> {
    requireManagementKey(principal)
    await this.get(principal, id)
    await this.#deactivate(principal, id, `No activation ${id} exists.`)
  }

  async deactivateByKey(principal: Principal, input: DeactivateByKeyBody): Promise<void> {
    const { license, state } = await this.#licenses.getByKey(principal, input.key, input.productId)
    const activation = await this.#activations.findByFingerprint(
      license.id,
      input.fingerprint,
      state.determinedAt,
    )
    const notActivated = 'This machine is not activated for this license.'
    if (activation === undefined) {
      throw activationNotFound(notActivated)
    }
    await this.#deactivate(principal, activation.id, notActivated)
  }

  async #deactivate(principal: Principal, id: ActivationId, notFound: string): Promise<void> {
    const deleted = await this.#storage.write(principal, async ({ activations, events }) => {
      const deleted = await activations.deactivate(id, this.#clock.now())
      if (deleted === undefined) {
        throw activationNotFound(notFound)
      }
      events.record('activation.deleted', deleted.productId, toActivationResource(deleted))
      return deleted
    })
    this.#counts.count(deleted.productId, 'deactivations')
  }

  /**
   * Renews the lease of a floating seat (any activation may send one): 404 `activation_not_found`
   * once it has lapsed (the application activates again), 409 `license_not_active` when the license
   * can no longer be used. Not an event: heartbeats come every few minutes from every machine, and
   * a lease that ends is recorded as `activation.expired`.
   */
  async heartbeat(principal: Principal, id: ActivationId): Promise<Activation> {
    const activation = await this.get(principal, id)
    const view = await this.#licenses.getUsable(principal, activation.licenseId, cannotKeepSeats)
    return this.#heartbeat(view, { id })
  }

  /** What an application calls to keep its seat: the machine is named by license key and fingerprint. */
  async heartbeatByKey(principal: Principal, input: HeartbeatByKeyBody): Promise<Activation> {
    const view = await this.#licenses.getUsableByKey(principal, input.key, input.productId, cannotKeepSeats)
    return this.#heartbeat(view, { licenseId: view.license.id, fingerprint: input.fingerprint })
  }

  /** Renews the seat of a usable license. */
  async #heartbeat(view: LicenseView, target: HeartbeatTarget): Promise<Activation> {
    const { license, state } = view
    const renewed = await this.#activations.heartbeat(target, state.determinedAt, license.heartbeatTtl)
    if (renewed === undefined) {
      throw activationNotFound(
        'This machine holds no seat of this license (never activated, deactivated, or its lease lapsed): activate it again.',
      )
    }
    return renewed
  }

  /** The activation as the caller may see it; a portal customer sees those of their own licenses only. */
  async get(principal: Principal | CustomerActor, id: ActivationId): Promise<Activation> {
    if (isCustomerActor(principal)) {
      const activation = await this.#activations.findById(id, this.#clock.now())
      const own =
        activation !== undefined &&
        (await this.#licenses.get(principal, activation.licenseId).then(
          () => true,
          (error: unknown) =>
            error instanceof DomainError && error.code === 'license_not_found'
              ? false
              : Promise.reject(error),
        ))
      if (activation === undefined || !own) {
        throw activationNotFound(`No activation ${id} is among your machines.`)
      }
      return activation
    }
    requireManagementKey(principal)
    const activation = await this.#activations.findById(id, this.#clock.now())
    if (activation === undefined || !canSeeProduct(principal, activation.productId)) {
      throw activationNotFound(`No activation ${id} is visible to this API key.`)
    }
    return activation
  }

  /** Every license's activations the key may see (a product key: its product's), narrowed by the query. */
  async listAll(principal: Principal, query: ListAllActivationsQuery): Promise<Paginated<Activation>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, allActivationsListSpec)
    const scope = scopedProductId(principal)
    if (scope !== undefined && query.productId !== undefined && query.productId !== scope) {
      return toPage({ items: [], totalCount: 0, offset: 0 }, request.limit, request.page ?? 0)
    }
    const slice = await this.#activations.listAll(
      request,
      { productId: scope ?? query.productId, licenseId: query.licenseId },
      this.#clock.now(),
    )
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  async list(
    principal: Principal,
    licenseId: LicenseId,
    query: ListActivationsQuery,
  ): Promise<Paginated<Activation>> {
    requireManagementKey(principal)
    const request = parseListQuery(query, activationListSpec)
    const { license, state } = await this.#licenses.get(principal, licenseId)
    const slice = await this.#activations.list(license.id, request, state.determinedAt)
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /** Takes a seat of `view`'s license, which the caller found usable, for the machine. */
  async #activate(
    principal: Principal | CustomerActor,
    view: LicenseView,
    input: ActivateLicenseBody,
    mode?: 'offline',
  ): Promise<ActivationResult> {
    const createdEvent = (activation: Activation) => ({
      ...toActivationResource(activation),
      ...(mode === undefined ? {} : { mode }),
    })
    // After the read that confirms the API key (config.confirmsApiKey): a deleted key hears 401.
    if (input.metadata !== undefined && byteLength(input.metadata) > maxActivationMetadataBytes) {
      throw new InvalidInputError(
        '#/metadata',
        `metadata must be at most ${maxActivationMetadataBytes} bytes as JSON.`,
      )
    }
    const { license } = view
    const now = this.#clock.now()
    const activation = {
      id: newId('activation'),
      licenseId: license.id,
      productId: license.productId,
      fingerprint: input.fingerprint,
      name: input.name ?? null,
      metadata: input.metadata ?? null,
      at: now,
      heartbeatTtl: license.heartbeatTtl,
      awaitsFirstActivation: license.firstActivationDuration !== null,
    }
    // A repeat records no event: on PostgreSQL it is one statement, where a unit of work would
    // open a transaction around it (ActivationStore.renewAlone).
    const renewed = await this.#activations.renewAlone(activation)
    if (typeof renewed === 'object') {
      return { outcome: 'existing', activation: renewed, expirationStarted: null }
    }
    if (renewed === 'no_seat') {
      // A new machine: on PostgreSQL, in the common case (a free seat), one statement takes the seat
      // and writes the activation with its event (ActivationStore.activateAlone), where BEGIN, three
      // statements and COMMIT were (docs/decisions/0017-fewer-round-trips-postgresql.md). Any other case goes on below.
      const created = newActivationAt(activation, activation.at, activation.heartbeatTtl)
      const done = await this.#storage.writeOne(principal, ({ activations, events }) => {
        events.record('activation.created', license.productId, createdEvent(created))
        return activations.activateAlone(activation, events.take())
      })
      if (done === 'done') {
        this.#counts.count(license.productId, 'activations')
        return { outcome: 'created', activation: created, expirationStarted: null }
      }
    }
    const outcome = await this.#storage.write(principal, async ({ activations, events }) => {
      const outcome = await activations.activate(activation, { renewalTried: renewed === 'no_seat' })
      for (const lapsed of outcome.reclaimed) {
        events.record('activation.expired', lapsed.productId, toActivationResource(lapsed))
      }
      // A repeat activation only refreshes lastSeenAt: not an event (it is a heartbeat, not a change).
      if (outcome.kind === 'created') {
        events.record('activation.created', license.productId, createdEvent(outcome.activation))
        if (outcome.expirationStarted !== null) {
          // The license's first activation ever: it had none, now it has this one.
          const started = {
            ...license,
            expirationDate: outcome.expirationStarted,
            firstActivationDuration: null,
            activationCount: 1,
          }
          events.record(
            'license.expiration_started',
            license.productId,
            toLicenseResource(viewAt(started, now)),
          )
        }
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
    if (outcome.kind === 'created') {
      this.#counts.count(license.productId, 'activations')
    }
    return {
      outcome: outcome.kind,
      activation: outcome.activation,
      expirationStarted: outcome.kind === 'created' ? outcome.expirationStarted : null,
    }
  }
}

/** How a refusal to use the license ends (LicenseFinder.getUsable). */
const cannotActivate = 'it cannot be activated'
const cannotKeepSeats = 'its seats cannot be kept'

function activationNotFound(detail: string): DomainError {
  return new DomainError('activation_not_found', detail)
}

function byteLength(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length
}
