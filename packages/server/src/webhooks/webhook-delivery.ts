import type {
  EventType,
  ProductId,
  WebhookDeliveryId,
  WebhookDeliveryStatus,
  WebhookEndpointId,
} from '@keyturn/protocol'

export interface WebhookDelivery {
  readonly id: WebhookDeliveryId
  readonly endpointId: WebhookEndpointId
  readonly eventId: string
  readonly eventType: EventType
  readonly productId: ProductId | null
  readonly status: WebhookDeliveryStatus
  readonly attempts: number
  readonly nextAttemptAt: Date | null
  readonly lastAttemptAt: Date | null
  readonly lastResponseStatus: number | null
  readonly lastResponseBody: string | null
  readonly lastError: string | null
  readonly deliveredAt: Date | null
  readonly createdAt: Date
}

/** What one attempt gave: an HTTP answer (2xx is delivered), or no answer at all. */
export type AttemptResult =
  | { readonly kind: 'answered'; readonly status: number; readonly body: string }
  | { readonly kind: 'failed'; readonly error: string }

/** How long a claimed delivery is ours: longer than one attempt (10 s) can take. */
export const deliveryLeaseMs = 60_000
/** Bytes of a response body kept in the log. */
export const maxKeptResponseBytes = 1024
