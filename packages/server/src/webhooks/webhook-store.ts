import type { EventType, ProductId, WebhookDeliveryId, WebhookEndpointId } from '@keyturn/protocol'
import type { FieldKinds, ListRequest, ListSlice, Sort } from '../core/list-query.js'
import type { AttemptResult, WebhookDelivery } from './webhook-delivery.js'
import type { WebhookEndpoint } from './webhook-endpoint.js'

export type EndpointSortField = 'createdAt'
export type EndpointFilterField = 'productId' | 'createdAt'
export const endpointListSpec = {
  sortFields: ['createdAt'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<EndpointSortField>,
  filterFields: {
    productId: { type: 'string' },
    createdAt: { type: 'timestamp' },
  } satisfies FieldKinds<EndpointFilterField>,
} as const

export type DeliverySortField = 'createdAt'
export type DeliveryFilterField = 'status' | 'eventType' | 'createdAt'
export const deliveryListSpec = {
  sortFields: ['createdAt'],
  defaultSort: { field: 'createdAt', order: 'desc' } satisfies Sort<DeliverySortField>,
  filterFields: {
    status: { type: 'enum', values: ['pending', 'delivered', 'failed'] },
    eventType: { type: 'string' },
    createdAt: { type: 'timestamp' },
  } satisfies FieldKinds<DeliveryFilterField>,
} as const

export interface EndpointChanges {
  readonly url?: string
  readonly description?: string | null
  readonly eventTypes?: readonly string[]
  readonly disabledAt?: Date | null
  readonly failingSince?: Date | null
  readonly secretEncrypted?: string
  readonly updatedAt: Date
}

/** A delivery claimed for sending, with what sending needs. */
export interface ClaimedDelivery {
  readonly id: WebhookDeliveryId
  readonly leaseId: string
  readonly attempts: number
  readonly endpoint: {
    readonly id: WebhookEndpointId
    readonly url: string
    readonly secretEncrypted: string
  }
  readonly eventId: string
  /** The event as the API shows it, serialised: the request body. */
  readonly payload: string
}

export interface WebhookStore {
  insertEndpoint(endpoint: WebhookEndpoint, secretEncrypted: string): Promise<void>
  findEndpoint(id: WebhookEndpointId): Promise<WebhookEndpoint | undefined>
  findEndpointSecret(id: WebhookEndpointId): Promise<string | undefined>
  updateEndpoint(id: WebhookEndpointId, changes: EndpointChanges): Promise<WebhookEndpoint | undefined>
  deleteEndpoint(id: WebhookEndpointId): Promise<WebhookEndpoint | undefined>
  listEndpoints(
    request: ListRequest<EndpointSortField, EndpointFilterField>,
    productId: ProductId | undefined,
  ): Promise<ListSlice<WebhookEndpoint>>
  /** Whether an enabled endpoint subscribes to any of `types` (directly or by pattern). */
  isAnySubscribedTo(types: readonly EventType[]): Promise<boolean>

  findDelivery(id: WebhookDeliveryId): Promise<WebhookDelivery | undefined>
  listDeliveries(
    endpointId: WebhookEndpointId,
    request: ListRequest<DeliverySortField, DeliveryFilterField>,
  ): Promise<ListSlice<WebhookDelivery>>
  /** Makes a delivery due now again (pending, lease cleared). */
  retryDelivery(id: WebhookDeliveryId, now: Date): Promise<WebhookDelivery | undefined>

  /**
   * Turns up to `limit` events not yet dispatched into deliveries for every endpoint that wants them,
   * and marks them dispatched, in one transaction; events claimed by another process are skipped.
   * Returns how many events it dispatched.
   */
  dispatch(now: Date, limit: number): Promise<number>
  /**
   * Leases up to `limit` due deliveries of enabled endpoints until `leaseUntil`, except `sending`
   * (deliveries this process is still sending, whose lease may have run out meanwhile).
   */
  claimDue(
    now: Date,
    leaseUntil: Date,
    limit: number,
    sending?: readonly WebhookDeliveryId[],
  ): Promise<ClaimedDelivery[]>
  /**
   * Records an attempt of a claimed delivery (only while `leaseId` still holds it): delivered for a
   * 2xx, else pending again at `nextAttemptAt`, or failed for good when that is null. Updates the
   * endpoint's failing streak and returns its start (null after a success).
   */
  recordAttempt(
    delivery: ClaimedDelivery,
    at: Date,
    result: AttemptResult,
    nextAttemptAt: Date | null,
  ): Promise<{ readonly failingSince: Date | null } | undefined>
  /** Disables an enabled endpoint; undefined when it was disabled (or deleted) already. */
  disableEndpoint(id: WebhookEndpointId, at: Date): Promise<WebhookEndpoint | undefined>
  /** Pending deliveries and the creation time of the oldest (for /metrics). */
  pendingBacklog(): Promise<{ readonly count: number; readonly oldest: Date | null }>
  /** Events not yet turned into deliveries (for /metrics). */
  undispatchedEvents(): Promise<number>
}
