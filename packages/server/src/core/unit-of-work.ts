/**
 * @module The unit of work: a state change, the Event that records it and (through the event's
 * request id) the idempotency outcome commit in ONE transaction, or none of them does (the
 * transactional outbox, docs/decisions/0012-events-and-unit-of-work.md). Services receive a `UnitOfWork` whose `write` hands them
 * stores bound to the transaction plus an `EventRecorder`.
 */
import type {
  CustomerId,
  EventActor,
  EventId,
  EventType,
  IntegrationId,
  ProductId,
  SystemActorId,
} from '@keyturn/protocol'
import type { Principal } from './principal.js'

/** Who made a change, as the event records it: `{ type, id }` (protocol's EventActor). */
export type Actor = EventActor

/** One recorded state change (the audit log's entry and the payload of webhook deliveries). */
export interface Event {
  readonly id: EventId
  readonly type: EventType
  readonly occurredAt: Date
  readonly productId: ProductId | null
  readonly actor: Actor
  readonly requestId: string | null
  /** The resource as the API returned it after the change; already in wire form. */
  readonly data: Record<string, unknown>
}

/** A customer signed in to the customer portal (portal/), in a request. */
export interface CustomerActor {
  readonly type: 'customer'
  readonly id: CustomerId
  readonly requestId?: string
}

/** Whether the caller is a customer signed in to the portal (not an API key or operator). */
export function isCustomerActor(by: Principal | CustomerActor): by is CustomerActor {
  return 'type' in by && by.type === 'customer'
}

/** The server itself: a background job, named by its part (protocol's systemActorIds). */
export interface SystemActor {
  readonly type: 'system'
  readonly id: SystemActorId
}

/** A payment-provider integration acting on a provider's webhook (integrations/), or on its retry. */
export interface IntegrationActor {
  readonly type: 'integration'
  readonly id: IntegrationId
}

/**
 * Who made a change: the calling API key (with its request), a portal customer, a payment-provider
 * integration, or a part of the server.
 */
export type ChangeActor = Principal | CustomerActor | IntegrationActor | SystemActor

/** A change the server makes on its own, from one of its parts. */
export function systemActor(id: SystemActorId): SystemActor {
  return { type: 'system', id }
}

/** Collects the events of one transaction; they are written just before it commits. */
export interface EventRecorder {
  /**
   * Records that `type` happened to `data` (the resource as the API returns it after the change, for
   * a deletion as it was; never a secret). `productId` is the owning product, null for global objects.
   */
  record(type: EventType, productId: ProductId | null, data: object): void
}

/**
 * The events of a change that one statement makes (`UnitOfWork.writeOne`): recorded first, then
 * taken by the store method whose statement writes them.
 */
export interface StatementEvents extends EventRecorder {
  /** The events recorded so far, for the statement to write; the unit of work writes none of them. */
  take(): readonly Event[]
}

export interface UnitOfWork<Stores> {
  /**
   * Runs `work` in one write transaction with transaction-bound stores: its changes and the events
   * it records commit together, or (when it throws) none of them.
   */
  write<T>(by: ChangeActor, work: (tx: Stores & { readonly events: EventRecorder }) => Promise<T>): Promise<T>
  /**
   * Fast path (docs/decisions/0017-fewer-round-trips-postgresql.md): `write` for a change that ONE statement makes, its events included. `work`
   * records the events, then makes its one write through a store method that takes `events.take()`
   * and writes them in the same statement. On PostgreSQL no transaction is opened around it (a
   * statement is atomic by itself; BEGIN and COMMIT were two of a license creation's round trips);
   * on SQLite it is `write`, in the group commit. An event left untaken is a bug, and throws there.
   */
  writeOne<T>(
    by: ChangeActor,
    work: (tx: Stores & { readonly events: StatementEvents }) => Promise<T>,
  ): Promise<T>
  /**
   * Records an event that goes with no change of state (a token issued, a validation outcome): it is
   * committed when this resolves. Concurrent ones share a transaction (group commit), so a burst of
   * them pays one commit, not one each.
   */
  recordAlone(by: ChangeActor, type: EventType, productId: ProductId | null, data: object): Promise<void>
  /**
   * Like `recordAlone`, for a record that must never cost its answer (a validation's outcome): when
   * the database has no room left (a full disk), the event is dropped and this answers false.
   */
  recordUnlessFull(
    by: ChangeActor,
    type: EventType,
    productId: ProductId | null,
    data: object,
  ): Promise<boolean>
}
