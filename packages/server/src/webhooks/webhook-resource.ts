import type {
  WebhookDeliveryResource,
  WebhookEndpointResource,
  WebhookEndpointWithSecretResource,
} from '@keyturn/protocol'
import type { WebhookDelivery } from './webhook-delivery.js'
import type { WebhookEndpoint } from './webhook-endpoint.js'

/** The only converter from the domain's endpoint to the wire shape; the secret never leaves here. */
export function toWebhookEndpointResource(endpoint: WebhookEndpoint): WebhookEndpointResource {
  return {
    id: endpoint.id,
    object: 'WebhookEndpoint',
    url: endpoint.url,
    description: endpoint.description,
    eventTypes: [...endpoint.eventTypes],
    productId: endpoint.productId,
    enabled: endpoint.disabledAt === null,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  }
}

export function toWebhookEndpointWithSecretResource(created: {
  endpoint: WebhookEndpoint
  secret: string
}): WebhookEndpointWithSecretResource {
  return { ...toWebhookEndpointResource(created.endpoint), secret: created.secret }
}

export function toWebhookDeliveryResource(delivery: WebhookDelivery): WebhookDeliveryResource {
  return {
    id: delivery.id,
    object: 'WebhookDelivery',
    endpointId: delivery.endpointId,
    eventId: delivery.eventId as WebhookDeliveryResource['eventId'],
    eventType: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    lastAttemptAt: delivery.lastAttemptAt?.toISOString() ?? null,
    lastResponseStatus: delivery.lastResponseStatus,
    lastResponseBody: delivery.lastResponseBody,
    lastError: delivery.lastError,
    nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
    createdAt: delivery.createdAt.toISOString(),
  }
}
