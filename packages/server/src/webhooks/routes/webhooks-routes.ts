import type { App } from '../../http/app-types.js'
import type { WebhookService } from '../webhook-service.js'
import { registerCreateWebhookEndpoint } from './create-webhook-endpoint.js'
import { registerDeleteWebhookEndpoint } from './delete-webhook-endpoint.js'
import { registerGetWebhookEndpoint } from './get-webhook-endpoint.js'
import { registerListWebhookDeliveries } from './list-webhook-deliveries.js'
import { registerListWebhookEndpoints } from './list-webhook-endpoints.js'
import { registerRetryWebhookDelivery } from './retry-webhook-delivery.js'
import { registerRotateWebhookEndpointSecret } from './rotate-webhook-endpoint-secret.js'
import { registerTestWebhookEndpoint } from './test-webhook-endpoint.js'
import { registerUpdateWebhookEndpoint } from './update-webhook-endpoint.js'

/** Every route of the webhooks feature, on the API scope (under /api/v0, behind authentication). */
export function registerWebhooksRoutes(api: App, webhooks: WebhookService): void {
  registerListWebhookEndpoints(api, webhooks)
  registerCreateWebhookEndpoint(api, webhooks)
  registerGetWebhookEndpoint(api, webhooks)
  registerUpdateWebhookEndpoint(api, webhooks)
  registerDeleteWebhookEndpoint(api, webhooks)
  registerRotateWebhookEndpointSecret(api, webhooks)
  registerTestWebhookEndpoint(api, webhooks)
  registerListWebhookDeliveries(api, webhooks)
  registerRetryWebhookDelivery(api, webhooks)
}
