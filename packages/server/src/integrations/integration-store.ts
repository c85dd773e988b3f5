import type { CustomerId, IntegrationId, IntegrationMapping, LicenseId } from '@keyturn/protocol'
import type { Integration } from './integration.js'

/** An integration with its encrypted signing secret (the receivers decrypt it). */
export interface StoredIntegration {
  readonly integration: Integration
  readonly signingSecretEncrypted: string
}

export interface IntegrationChanges {
  readonly description?: string | null
  readonly mappings?: readonly IntegrationMapping[]
  readonly onRefund?: 'revoke' | 'none'
  readonly paymentGraceDays?: number
  readonly signingSecretEncrypted?: string
  readonly updatedAt: Date
}

/** The most integrations one server keeps: the list is answered whole. */
export const maxIntegrations = 100

/** A provider event as received: what it did, or why it did nothing. */
export interface ReceivedEvent {
  readonly dedupeKey: string
  readonly eventType: string
  readonly status: 'processed' | 'ignored' | 'pending' | 'failed'
  readonly outcome: string
  readonly attempts: number
  /** When a pending event is tried next; null otherwise. */
  readonly nextAttemptAt: Date | null
  readonly receivedAt: Date
  readonly updatedAt: Date
}

/** A pending event taken for an attempt. */
export interface PendingEvent {
  readonly eventType: string
  readonly payload: unknown
  /** Attempts including this one (the first, at receipt, counts). */
  readonly attempts: number
  readonly receivedAt: Date
}

export interface NewReceivedEvent {
  readonly dedupeKey: string
  readonly eventType: string
  readonly status: ReceivedEvent['status']
  readonly outcome: string
  /** The parsed body, kept while the event waits to be handled. */
  readonly payload: unknown
  readonly receivedAt: Date
}

/** Storage port of integrations (kysely-integration-store.ts). */
export interface IntegrationStore {
  insert(integration: Integration, signingSecretEncrypted: string): Promise<void>
  find(id: IntegrationId): Promise<StoredIntegration | undefined>
  list(): Promise<Integration[]>
  count(): Promise<number>
  update(id: IntegrationId, changes: IntegrationChanges): Promise<Integration | undefined>
  delete(id: IntegrationId): Promise<boolean>
  /**
   * Records a received provider event once: false when its dedupe key is already recorded (a
   * redelivery), whichever of several concurrent deliveries wrote it.
   */
  recordReceived(id: IntegrationId, event: NewReceivedEvent): Promise<boolean>
  /**
   * Sets what a recorded event did, or why it did nothing; `pending` keeps its payload for the
   * retry job and sets when it is tried next (`nextAttemptAt`).
   */
  settle(
    id: IntegrationId,
    dedupeKey: string,
    status: ReceivedEvent['status'],
    outcome: string,
    at: Date,
    nextAttemptAt?: Date,
  ): Promise<void>
  /** Pending events due at `now`, oldest due first: what the retry job tries. */
  duePending(
    now: Date,
    limit: number,
  ): Promise<{ readonly integrationId: IntegrationId; readonly dedupeKey: string }[]>
  /**
   * Takes a due pending event for one attempt (counting it), in the caller's transaction; undefined
   * when it is no longer pending or due (another process took it).
   */
  claimPending(id: IntegrationId, dedupeKey: string, now: Date): Promise<PendingEvent | undefined>
  /** The customer with this address (addresses are unique), if any. */
  customerIdByEmail(email: string): Promise<CustomerId | undefined>
  /** Links a provider object (an order, a subscription) to the license it bought. */
  link(
    id: IntegrationId,
    objectKind: string,
    objectId: string,
    customerId: CustomerId | null,
    licenseId: LicenseId | null,
    at: Date,
  ): Promise<void>
  /** The Keyturn customer a provider customer is linked to, if any. */
  linkedCustomer(id: IntegrationId, objectKind: string, objectId: string): Promise<CustomerId | undefined>
  /** The license a provider object bought, if one is linked. */
  linkedLicense(id: IntegrationId, objectKind: string, objectId: string): Promise<LicenseId | undefined>
  /** The latest received events of an integration, newest first. */
  recentEvents(id: IntegrationId, limit: number): Promise<ReceivedEvent[]>
}
