/**
 * @module The overview's latest failures: webhook deliveries that are failing, and the clients the
 * rate limits refused (`GET /stats/failures`).
 */
import { type Static, Type } from 'typebox'
import { ProductIdSchema, TimestampSchema } from './common.js'
import { EventIdSchema, EventTypeSchema } from './events.js'
import { WebhookDeliveryIdSchema, WebhookEndpointIdSchema } from './webhooks.js'

/** How many of each list one answer holds at most. */
export const maxFailuresListed = 20

export const StatsFailuresQuerySchema = Type.Object(
  {
    // Only this product's failures; default: every product the key may see (the route's description).
    productId: Type.Optional(ProductIdSchema),
  },
  { additionalProperties: false },
)
export type StatsFailuresQuery = Static<typeof StatsFailuresQuerySchema>

export const FailingDeliverySchema = Type.Object(
  {
    deliveryId: WebhookDeliveryIdSchema,
    endpointId: WebhookEndpointIdSchema,
    endpointUrl: Type.String({ maxLength: 2048, description: 'The URL the delivery is sent to.' }),
    eventId: EventIdSchema,
    eventType: EventTypeSchema,
    status: Type.Union([Type.Literal('pending'), Type.Literal('failed')], {
      description: '`pending`: its last attempt failed and it will be tried again; `failed`: given up.',
    }),
    attempts: Type.Integer({ minimum: 1, description: 'Attempts made so far.' }),
    lastResponseStatus: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "The HTTP status of the last attempt's answer; null when none came (network error, timeout).",
    }),
    lastError: Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
      description: 'Why the last attempt failed, when no HTTP answer says it.',
    }),
    lastAttemptAt: TimestampSchema,
    nextAttemptAt: Type.Union([TimestampSchema, Type.Null()], {
      description: 'When it is tried again; null once given up.',
    }),
  },
  { additionalProperties: false },
)
export type FailingDelivery = Static<typeof FailingDeliverySchema>

export const RateLimitedClientSchema = Type.Object(
  {
    budget: Type.Union(
      [
        Type.Literal('management'),
        Type.Literal('application'),
        Type.Literal('address'),
        Type.Literal('receiver'),
      ],
      {
        description:
          "Which limit refused it: a management key's budget for the management API, its budget for the application-facing routes, the per-address budget (client keys, unauthenticated requests), or a payment provider's receiver.",
      },
    ),
    clientKind: Type.Union(
      [
        Type.Literal('apiKey'),
        Type.Literal('operator'),
        Type.Literal('address'),
        Type.Literal('integration'),
      ],
      { description: 'What `client` names.' },
    ),
    client: Type.String({
      maxLength: 128,
      description: 'The API key id, operator id, client address (an IPv6 /64 as one) or integration id.',
    }),
    productId: Type.Union([ProductIdSchema, Type.Null()], {
      description:
        "The calling key's product; null for an admin key, an operator or an unauthenticated request.",
    }),
    refused: Type.Integer({ minimum: 1, description: 'Requests answered 429 since `firstRefusedAt`.' }),
    firstRefusedAt: TimestampSchema,
    lastRefusedAt: TimestampSchema,
  },
  { additionalProperties: false },
)
export type RateLimitedClient = Static<typeof RateLimitedClientSchema>

export const StatsFailuresSchema = Type.Object(
  {
    object: Type.Literal('StatsFailures'),
    productId: Type.Union([ProductIdSchema, Type.Null()], {
      description: 'The product the failures are limited to; null: every product the key may see.',
    }),
    webhookDeliveries: Type.Array(FailingDeliverySchema, {
      maxItems: maxFailuresListed,
      description: 'Deliveries whose last attempt failed (still retried, or given up), latest attempt first.',
    }),
    rateLimited: Type.Array(RateLimitedClientSchema, {
      maxItems: maxFailuresListed,
      description:
        'Clients the rate limits refused, latest first, as this serving process recorded them since it started.',
    }),
    rateLimitedSince: Type.String({
      format: 'date-time',
      description: 'When this serving process started recording refusals (its start).',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        object: 'StatsFailures',
        productId: null,
        webhookDeliveries: [
          {
            deliveryId: 'dlv_5vPz8QwKx2LmNc7RtYb3Hd',
            endpointId: 'whk_8sLq2NcVx5RtPm3KbY7wHd',
            endpointUrl: 'https://hooks.example.com/keyturn',
            eventId: 'evt_7hKq3NcVx5RtPm2LbY8wJd',
            eventType: 'license.created',
            status: 'pending',
            attempts: 3,
            lastResponseStatus: 503,
            lastError: null,
            lastAttemptAt: '2026-11-30T13:58:00.000Z',
            nextAttemptAt: '2026-11-30T14:28:00.000Z',
          },
        ],
        rateLimited: [
          {
            budget: 'address',
            clientKind: 'address',
            client: '203.0.113.7',
            productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
            refused: 42,
            firstRefusedAt: '2026-11-30T13:40:12.000Z',
            lastRefusedAt: '2026-11-30T14:01:55.000Z',
          },
        ],
        rateLimitedSince: '2026-11-30T08:00:00.000Z',
      },
    ],
  },
)
export type StatsFailures = Static<typeof StatsFailuresSchema>
