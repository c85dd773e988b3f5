/**
 * @module The unit of work: a state change, the Event that records it and (through the event's
 * request id) the idempotency outcome commit in ONE transaction, or none of them does (the
 * transactional outbox of issue #10). Services receive a `UnitOfWork` whose `write` hands them
 * stores bound to the transaction plus an `EventRecorder`.
 */
import type { EventType, ProductId } from '@keyturn/protocol'
import type { Principal } from './principal.js'

/** Who made a change: the calling API key (with its request), or the server itself. */
export type ChangeActor = Principal | 'system'

/** Collects the events of one transaction; they are written just before it commits. */
export interface EventRecorder {
  /**
   * Records that `type` happened to `data` (the resource as the API returns it after the change, for
   * a deletion as it was; never a secret). `productId` is the owning product, null for global objects.
   */
  record(type: EventType, productId: ProductId | null, data: object): void
}

export interface UnitOfWork<Stores> {
  /**
   * Runs `work` in one write transaction with transaction-bound stores: its changes and the events
   * it records commit together, or (when it throws) none of them.
   */
  write<T>(by: ChangeActor, work: (tx: Stores & { readonly events: EventRecorder }) => Promise<T>): Promise<T>
  /**
   * Records an event that goes with no change of state (a token issued, a validation outcome): it is
   * committed when this resolves. Concurrent ones share a transaction (group commit), so a burst of
   * them pays one commit, not one each.
   */
  recordAlone(by: ChangeActor, type: EventType, productId: ProductId | null, data: object): Promise<void>
}
