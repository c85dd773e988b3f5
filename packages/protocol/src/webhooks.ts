/**
 * @module Webhook endpoints and deliveries (Standard Webhooks): each event matching an endpoint's
 * `eventTypes` is POSTed to its URL, signed with its `whsec_…` secret.
 */
import { type Static, Type } from 'typebox'
import { listQueryProperties, PaginatedSchema, ProductIdSchema, TimestampSchema } from './common.js'
import { EventIdSchema, EventTypeSchema } from './events.js'
import { exampleTime, exampleWebhookEndpoint } from './examples.js'

export const WebhookEndpointIdSchema = Type.TemplateLiteral([Type.Literal('whk_'), Type.String()], {
  maxLength: 64,
  examples: ['whk_8sLq2NcVx5RtPm3KbY7wHd'],
})
export type WebhookEndpointId = Static<typeof WebhookEndpointIdSchema>

export const WebhookDeliveryIdSchema = Type.TemplateLiteral([Type.Literal('dlv_'), Type.String()], {
  maxLength: 64,
  examples: ['dlv_3Nc8VqLx2TmRp7KbW5sYhD'],
})
export type WebhookDeliveryId = Static<typeof WebhookDeliveryIdSchema>

/** An event type, `<resource>.*` for every type of a resource, or `*` for all. */
export const EventTypePatternSchema = Type.String({
  pattern: '^(\\*|[a-z_]{1,40}\\.\\*|[a-z_]{1,40}\\.[a-z_]{1,40})$',
  maxLength: 82,
  examples: ['license.*'],
})
export const maxEventTypePatterns = 50

const WebhookUrlSchema = Type.String({
  format: 'uri',
  minLength: 8,
  maxLength: 2048,
  description:
    'Where deliveries are POSTed: `https://` (`http://` only with KEYTURN_WEBHOOK_ALLOW_HTTP=true). Addresses that resolve to loopback, private, link-local or metadata addresses are refused at delivery time unless KEYTURN_WEBHOOK_ALLOW_PRIVATE=true.',
  examples: ['https://billing.example.com/keyturn'],
})

const endpointProperties = {
  id: WebhookEndpointIdSchema,
  object: Type.Literal('WebhookEndpoint'),
  url: WebhookUrlSchema,
  description: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
  eventTypes: Type.Array(EventTypePatternSchema, { minItems: 1, maxItems: maxEventTypePatterns }),
  productId: Type.Union([ProductIdSchema, Type.Null()], {
    description: 'Only events of this product; null: every product’s, and global events (admin keys only).',
  }),
  enabled: Type.Boolean({
    description: 'false: nothing is sent (set by PATCH, or by the server after 5 days of failed deliveries).',
  }),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
}

export const WebhookEndpointResourceSchema = Type.Object(endpointProperties, {
  additionalProperties: false,
  examples: [exampleWebhookEndpoint],
})
export type WebhookEndpointResource = Static<typeof WebhookEndpointResourceSchema>

/** Returned by create and rotate-secret: the only times the secret is shown. */
export const WebhookEndpointWithSecretResourceSchema = Type.Object(
  {
    ...endpointProperties,
    secret: Type.String({
      description: 'The signing secret (`whsec_` + base64 of 32 random bytes). Shown only in this response.',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
  },
  {
    additionalProperties: false,
    examples: [{ ...exampleWebhookEndpoint, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=' }],
  },
)
export type WebhookEndpointWithSecretResource = Static<typeof WebhookEndpointWithSecretResourceSchema>

export const CreateWebhookEndpointBodySchema = Type.Object(
  {
    url: WebhookUrlSchema,
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    eventTypes: Type.Array(EventTypePatternSchema, { minItems: 1, maxItems: maxEventTypePatterns }),
    productId: Type.Optional(ProductIdSchema),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    examples: [
      { url: 'https://billing.example.com/keyturn', description: 'Billing sync', eventTypes: ['license.*'] },
    ],
  },
)
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBodySchema>

export const UpdateWebhookEndpointBodySchema = Type.Object(
  {
    url: Type.Optional(WebhookUrlSchema),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    eventTypes: Type.Optional(
      Type.Array(EventTypePatternSchema, { minItems: 1, maxItems: maxEventTypePatterns }),
    ),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, examples: [{ enabled: true }] },
)
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBodySchema>

export const WebhookEndpointParamsSchema = Type.Object(
  { id: WebhookEndpointIdSchema },
  { additionalProperties: false },
)
export const WebhookDeliveryParamsSchema = Type.Object(
  { id: WebhookDeliveryIdSchema },
  { additionalProperties: false },
)

export const ListWebhookEndpointsQuerySchema = Type.Object(
  { ...listQueryProperties },
  { additionalProperties: false },
)
export type ListWebhookEndpointsQuery = Static<typeof ListWebhookEndpointsQuerySchema>
export const WebhookEndpointListSchema = PaginatedSchema(WebhookEndpointResourceSchema)

export const WebhookDeliveryStatusSchema = Type.Enum(['pending', 'delivered', 'failed'])
export type WebhookDeliveryStatus = Static<typeof WebhookDeliveryStatusSchema>

export const WebhookDeliveryResourceSchema = Type.Object(
  {
    id: WebhookDeliveryIdSchema,
    object: Type.Literal('WebhookDelivery'),
    endpointId: WebhookEndpointIdSchema,
    eventId: EventIdSchema,
    eventType: EventTypeSchema,
    status: WebhookDeliveryStatusSchema,
    attempts: Type.Integer({ minimum: 0 }),
    lastAttemptAt: Type.Union([TimestampSchema, Type.Null()]),
    lastResponseStatus: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The HTTP status of the last attempt; null when none answered.',
    }),
    lastResponseBody: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
      description: 'The first 1 KiB of the last response body.',
    }),
    lastError: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the last attempt failed (timeout, refused address, status), or null.',
    }),
    nextAttemptAt: Type.Union([TimestampSchema, Type.Null()], {
      description: 'When it is sent (again); null once delivered or failed for good.',
    }),
    deliveredAt: Type.Union([TimestampSchema, Type.Null()]),
    createdAt: TimestampSchema,
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'dlv_3Nc8VqLx2TmRp7KbW5sYhD',
        object: 'WebhookDelivery',
        endpointId: 'whk_8sLq2NcVx5RtPm3KbY7wHd',
        eventId: 'evt_4Rk9xTq2LmNb7VcYp3HsWd',
        eventType: 'license.created',
        status: 'pending',
        attempts: 1,
        lastAttemptAt: exampleTime,
        lastResponseStatus: 503,
        lastResponseBody: 'Service Unavailable',
        lastError: 'The endpoint answered 503.',
        nextAttemptAt: '2030-01-01T00:05:00.000Z',
        deliveredAt: null,
        createdAt: exampleTime,
      },
    ],
  },
)
export type WebhookDeliveryResource = Static<typeof WebhookDeliveryResourceSchema>

export const ListWebhookDeliveriesQuerySchema = Type.Object(
  { ...listQueryProperties },
  { additionalProperties: false },
)
export type ListWebhookDeliveriesQuery = Static<typeof ListWebhookDeliveriesQuerySchema>
export const WebhookDeliveryListSchema = PaginatedSchema(WebhookDeliveryResourceSchema)

/**
 * Seconds between attempts after a failure (the published schedule, each ±10% jitter): about a day
 * and a half in all; an endpoint whose deliveries have all failed for 5 days is disabled.
 */
export const webhookRetrySchedule = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000, 36_000] as const
export const webhookDisableAfterSeconds = 5 * 24 * 60 * 60
