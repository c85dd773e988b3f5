import type { ActivationId, LicenseId, ProductId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { Event } from '../core/unit-of-work.js'
import type { Activation } from './activation.js'

export type ActivationSortField = 'createdAt' | 'lastSeenAt' | 'fingerprint'
export type ActivationFilterField = 'createdAt' | 'lastSeenAt' | 'fingerprint' | 'productId' | 'licenseId'

export const activationListSpec = {
  sortFields: ['createdAt', 'lastSeenAt', 'fingerprint'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<ActivationSortField>,
  filterFields: {
    createdAt: { type: 'timestamp' },
    lastSeenAt: { type: 'timestamp' },
    fingerprint: { type: 'string' },
  } satisfies FieldKinds<Exclude<ActivationFilterField, 'productId' | 'licenseId'>>,
} as const

/** `GET /activations`, across licenses: the same, and filters by product and license. */
export const allActivationsListSpec = {
  ...activationListSpec,
  filterFields: {
    ...activationListSpec.filterFields,
    productId: { type: 'string' },
    licenseId: { type: 'string' },
  } satisfies FieldKinds<ActivationFilterField>,
} as const

/** Which activations `listAll` may see: one product's (a product key, or a query) and one license's. */
export interface ActivationScope {
  readonly productId?: ProductId | undefined
  readonly licenseId?: LicenseId | undefined
}

export interface NewActivation {
  readonly id: ActivationId
  readonly licenseId: LicenseId
  readonly productId: ProductId
  readonly fingerprint: string
  readonly name: string | null
  readonly metadata: Readonly<Record<string, unknown>> | null
  readonly at: Date
  /** The license's heartbeat TTL (seconds): the lease this activation starts with; null: none. */
  readonly heartbeatTtl: number | null
  /**
   * The license, as the caller read it, waits for its first activation to start its expiry (a
   * `firstActivation` policy's duration). When it did not, it never will again: nothing sets that
   * duration on a license that has none, so no statement needs to look.
   */
  readonly awaitsFirstActivation: boolean
}

/**
 * Every outcome carries `reclaimed`: lapsed activations of the license that the transaction removed
 * (their seats were free), each of which the caller records as `activation.expired`.
 */
export type ActivateOutcome =
  /**
   * `expirationStarted`: this was the license's first activation and it had been waiting for it (a
   * `firstActivation` policy): the expiration date it set, in the same transaction.
   */
  (
    | {
        readonly kind: 'created'
        readonly activation: Activation
        readonly expirationStarted: Date | null
      }
    /** The fingerprint holds a seat already: its lastSeenAt and lease (and name/metadata, when given) are refreshed. */
    | { readonly kind: 'existing'; readonly activation: Activation }
    | { readonly kind: 'limit_reached'; readonly limit: number; readonly count: number }
  ) & { readonly reclaimed: readonly Activation[] }

/** Which activation a heartbeat is for. */
export type HeartbeatTarget =
  | { readonly id: ActivationId }
  | { readonly licenseId: LicenseId; readonly fingerprint: string }

/**
 * Activations as the API sees them: a lapsed floating seat is gone (not found, not listed), though
 * its row stays until the sweep or a new activation of the license removes it.
 */
export interface ActivationStore {
  /**
   * Activates a fingerprint atomically: the seat is taken by a guarded increment of the license's
   * counter in the same transaction as the insert, so concurrent callers never exceed the limit.
   * When the license is full and has a heartbeat TTL, its lapsed activations are removed first,
   * in that transaction, with the license row locked.
   */
  /**
   * `renewalTried`: `renewAlone` just found no seat held, so the first try does not renew again; a
   * machine activated meanwhile is met by the insert, and found by the second try.
   */
  activate(activation: NewActivation, options?: { readonly renewalTried?: boolean }): Promise<ActivateOutcome>
  /**
   * The machines of a license being imported, in the transaction that inserts that license (which
   * was inserted with their number as its `activationCount`, and whose seats the caller checked):
   * one insert, each with its own `at` as its last heartbeat. Distinct fingerprints only.
   */
  insertImported(activations: readonly NewActivation[]): Promise<void>
  /**
   * Fast path for a repeat activation (the machine holds its seat; an application activates at
   * every start): renews it with one statement of its own, outside any transaction, as `activate`
   * would. `no_seat`: the machine holds none (then `activate` with `renewalTried`); `not_tried` on
   * an engine where `activate` does it as cheaply (SQLite: there `activate` renews in its group
   * commit, and a write alone would wait for a commit of its own).
   */
  renewAlone(activation: NewActivation): Promise<Activation | 'no_seat' | 'not_tried'>
  /**
   * Fast path for a new machine after `renewAlone` said `no_seat` (UnitOfWork.writeOne): takes a
   * seat, inserts the activation and writes `events`, in ONE statement outside any transaction, as
   * `activate` would in the common case. `not_done`, with nothing written, when that case is not
   * this one: the license is full (lapsed seats to reclaim, or the limit), the machine has an
   * activation (lapsed, or made meanwhile), the license awaits its first activation, or the engine
   * has no such statement (SQLite). Then `activate` (with `renewalTried`) does it the long way.
   */
  activateAlone(activation: NewActivation, events: readonly Event[]): Promise<'done' | 'not_done'>
  /** Renews the lease of an activation that holds its seat at `at`; undefined if unknown or lapsed. */
  heartbeat(target: HeartbeatTarget, at: Date, heartbeatTtl: number | null): Promise<Activation | undefined>
  /** Deletes the activation and frees its seat; undefined if it did not exist or had lapsed at `at`. */
  deactivate(id: ActivationId, at: Date): Promise<Activation | undefined>
  /** The activation if it holds its seat at `at`. */
  findById(id: ActivationId, at: Date): Promise<Activation | undefined>
  /** The machine's activation if it holds its seat at `at`. */
  findByFingerprint(licenseId: LicenseId, fingerprint: string, at: Date): Promise<Activation | undefined>
  /** Lapsed activations not removed yet, per license (absent: none). */
  countLapsed(licenseIds: readonly LicenseId[], at: Date): Promise<ReadonlyMap<LicenseId, number>>
  /** The activations of every license in `scope` holding a seat at `at`. */
  listAll(
    request: ListRequest<ActivationSortField, ActivationFilterField>,
    scope: ActivationScope,
    at: Date,
  ): Promise<ListSlice<Activation>>
  /** The activations holding a seat at `at`. */
  list(
    licenseId: LicenseId,
    request: ListRequest<ActivationSortField, ActivationFilterField>,
    at: Date,
  ): Promise<ListSlice<Activation>>
}
