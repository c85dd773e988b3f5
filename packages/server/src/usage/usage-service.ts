import {
  defaultUsageIncrement,
  type IncrementUsageBody,
  type IncrementUsageByKeyBody,
  type LicenseId,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { type Principal, requireManagementKey } from '../core/principal.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import { type LicenseView, viewAt } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import type { UsableLicenses } from '../licenses/usable-licenses.js'
import type { UsageStore } from './usage-store.js'

/** What usage needs of licenses, as the caller may see them (LicenseService fits). */
export interface LicenseAccess extends UsableLicenses {
  get(principal: Principal, id: LicenseId): Promise<LicenseView>
}

export interface UsageServiceDeps {
  /** Writes: the count and its event commit together (one statement on PostgreSQL). */
  readonly storage: UnitOfWork<{ readonly usage: UsageStore }>
  readonly licenses: LicenseAccess
  readonly clock: Clock
}

/** Metered usage: a counter per license (`uses`) with an optional limit (`maxUses`). */
export class UsageService {
  readonly #storage: UnitOfWork<{ readonly usage: UsageStore }>
  readonly #licenses: LicenseAccess
  readonly #clock: Clock

  constructor(deps: UsageServiceDeps) {
    this.#storage = deps.storage
    this.#licenses = deps.licenses
    this.#clock = deps.clock
  }

  async increment(principal: Principal, id: LicenseId, input: IncrementUsageBody): Promise<LicenseView> {
    const view = await this.#licenses.getUsable(principal, id, noUsage)
    return this.#increment(principal, view, input.increment)
  }

  /** What an application calls when its user uses a metered feature (client keys may). */
  async incrementByKey(principal: Principal, input: IncrementUsageByKeyBody): Promise<LicenseView> {
    const view = await this.#licenses.getUsableByKey(principal, input.key, input.productId, noUsage)
    return this.#increment(principal, view, input.increment)
  }

  /** Starts counting again from 0 (a new billing period, say); management keys only. */
  async reset(principal: Principal, id: LicenseId): Promise<LicenseView> {
    requireManagementKey(principal)
    const { license } = await this.#licenses.get(principal, id)
    const now = this.#clock.now()
    return this.#storage.write(principal, async ({ usage, events }) => {
      if (!(await usage.reset(license.id, now))) {
        throw licenseNotFound(id)
      }
      const view = viewAt({ ...license, uses: 0, usesResetAt: now }, now)
      events.record('license.usage_reset', license.productId, toLicenseResource(view))
      return view
    })
  }

  /** Counts uses of `view`'s license, which the caller found usable. */
  async #increment(
    principal: Principal,
    view: LicenseView,
    increment = defaultUsageIncrement,
  ): Promise<LicenseView> {
    const { license, state } = view
    const counted = (uses: number) => viewAt({ ...license, uses }, state.determinedAt)
    // The count and its event in one statement on PostgreSQL (UsageStore.increment;
    // docs/decisions/0017-fewer-round-trips-postgresql.md). The event is recorded before the count is known: the store sets its `uses`.
    const outcome = await this.#storage.writeOne(principal, ({ usage, events }) => {
      const expected = toLicenseResource(counted(license.uses + increment))
      events.record('license.usage_incremented', license.productId, expected)
      return usage.increment(license.id, increment, events.take())
    })
    if (outcome === undefined) {
      throw licenseNotFound(license.id)
    }
    if (outcome.kind === 'limit_reached') {
      throw new DomainError(
        'usage_limit_reached',
        `License ${license.id} has used ${outcome.uses} of ${outcome.maxUses}; adding ${increment} would pass the limit, so nothing was added.`,
        { extensions: { uses: outcome.uses, maxUses: outcome.maxUses } },
      )
    }
    return counted(outcome.uses)
  }
}

/** How a refusal to use the license ends (LicenseAccess.getUsable). */
const noUsage = 'no usage is counted for it'

function licenseNotFound(id: LicenseId): DomainError {
  return new DomainError('license_not_found', `No license ${id} is visible to this API key.`)
}
