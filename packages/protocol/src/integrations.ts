/**
 * @module Integrations with payment providers (Stripe, Paddle, Lemon Squeezy): each one holds the
 * provider's webhook signing secret (stored encrypted, never shown again) and maps the provider's
 * items (a Stripe price, a Paddle price, a Lemon Squeezy variant) to a Keyturn product and policy.
 */
import { type Static, Type } from 'typebox'
import { PolicyIdSchema, ProductIdSchema, TimestampSchema } from './common.js'
import { exampleProductId, exampleTime } from './examples.js'

export const IntegrationIdSchema = Type.TemplateLiteral([Type.Literal('int_'), Type.String()], {
  maxLength: 64,
  examples: ['int_8sLq2NcVx5RtPm3KbY7wHe'],
})
export type IntegrationId = Static<typeof IntegrationIdSchema>

export const IntegrationProviderSchema = Type.Union(
  [Type.Literal('stripe'), Type.Literal('paddle'), Type.Literal('lemonsqueezy')],
  { description: 'The payment provider whose webhooks this integration receives.' },
)
export type IntegrationProvider = Static<typeof IntegrationProviderSchema>

export const maxIntegrationMappings = 100

export const IntegrationMappingSchema = Type.Object(
  {
    providerItemId: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'The provider’s id of what is sold: a Stripe price, a Paddle price, a Lemon Squeezy variant.',
      examples: ['price_1PqR2sT3uV4wX5yZ'],
    }),
    productId: ProductIdSchema,
    policyId: PolicyIdSchema,
  },
  { additionalProperties: false },
)
export type IntegrationMapping = Static<typeof IntegrationMappingSchema>

const MappingsSchema = Type.Array(IntegrationMappingSchema, {
  maxItems: maxIntegrationMappings,
  description: 'Which Keyturn product and policy each provider item sells; an item id appears at most once.',
})

const OnRefundSchema = Type.Union([Type.Literal('revoke'), Type.Literal('none')], {
  description: '`revoke`: a refund or chargeback revokes the license; `none`: the license is left as it is.',
})

const PaymentGraceDaysSchema = Type.Integer({
  minimum: 0,
  maximum: 90,
  description:
    'Days a license keeps validating after a failed payment (with the reason `payment_overdue`) before it stops.',
})

const SigningSecretSchema = Type.String({
  minLength: 8,
  maxLength: 500,
  description:
    'The provider’s webhook signing secret (Stripe `whsec_…`, Paddle `pdl_ntfset_…` secret key, the Lemon Squeezy webhook secret). Stored encrypted; never returned.',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
})

const exampleIntegration = {
  id: 'int_8sLq2NcVx5RtPm3KbY7wHe',
  object: 'Integration',
  provider: 'stripe',
  description: 'Stripe live mode',
  mappings: [
    {
      providerItemId: 'price_1PqR2sT3uV4wX5yZ',
      productId: exampleProductId,
      policyId: 'pol_4Nc8VqLx2TmRp7KbW5sYhD',
    },
  ],
  onRefund: 'revoke',
  paymentGraceDays: 7,
  webhookPath: '/api/v0/integrations/int_8sLq2NcVx5RtPm3KbY7wHe/webhook',
  createdAt: exampleTime,
  updatedAt: exampleTime,
} as const

export const IntegrationResourceSchema = Type.Object(
  {
    id: IntegrationIdSchema,
    object: Type.Literal('Integration'),
    provider: IntegrationProviderSchema,
    description: Type.Union([Type.String({ maxLength: 500 }), Type.Null()]),
    mappings: MappingsSchema,
    onRefund: OnRefundSchema,
    paymentGraceDays: PaymentGraceDaysSchema,
    webhookPath: Type.String({
      description: 'Where the provider sends its webhooks, relative to the server’s public URL (no API key).',
    }),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
  { additionalProperties: false, examples: [exampleIntegration] },
)
export type IntegrationResource = Static<typeof IntegrationResourceSchema>

export const CreateIntegrationBodySchema = Type.Object(
  {
    provider: IntegrationProviderSchema,
    signingSecret: SigningSecretSchema,
    description: Type.Optional(Type.String({ maxLength: 500 })),
    mappings: Type.Optional(MappingsSchema),
    onRefund: Type.Optional(OnRefundSchema),
    paymentGraceDays: Type.Optional(PaymentGraceDaysSchema),
  },
  {
    additionalProperties: false,
    examples: [
      {
        provider: 'stripe',
        signingSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        mappings: exampleIntegration.mappings,
        onRefund: 'revoke',
        paymentGraceDays: 7,
      },
    ],
  },
)
export type CreateIntegrationBody = Static<typeof CreateIntegrationBodySchema>

export const UpdateIntegrationBodySchema = Type.Object(
  {
    signingSecret: Type.Optional(SigningSecretSchema),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    mappings: Type.Optional(MappingsSchema),
    onRefund: Type.Optional(OnRefundSchema),
    paymentGraceDays: Type.Optional(PaymentGraceDaysSchema),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ mappings: exampleIntegration.mappings }],
  },
)
export type UpdateIntegrationBody = Static<typeof UpdateIntegrationBodySchema>

export const IntegrationListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(IntegrationResourceSchema) },
  { additionalProperties: false, examples: [{ object: 'list', data: [exampleIntegration] }] },
)

/** An integration as events and examples show it. */
export function exampleIntegrationResource() {
  return { ...exampleIntegration, mappings: [...exampleIntegration.mappings] }
}

export const IntegrationParamsSchema = Type.Object(
  { id: IntegrationIdSchema },
  { additionalProperties: false },
)

export const IntegrationEventResourceSchema = Type.Object(
  {
    object: Type.Literal('IntegrationEvent'),
    dedupeKey: Type.String({ description: 'The provider’s event id (Lemon Squeezy: a digest of the body).' }),
    eventType: Type.String({ description: 'The provider’s event type, as it named it.' }),
    status: Type.Union(
      [Type.Literal('processed'), Type.Literal('ignored'), Type.Literal('pending'), Type.Literal('failed')],
      {
        description:
          '`processed`: it changed something; `ignored`: nothing to do (unknown type, unmapped item); `pending`: waits for an earlier event and is retried; `failed`: retries gave up.',
      },
    ),
    outcome: Type.String({ description: 'What it did, or why it did nothing.' }),
    attempts: Type.Integer({
      minimum: 0,
      description:
        'How often it was acted on: once at receipt, then once per retry while `pending` (after a minute, the wait doubling to six hours; given up as `failed` three days after receipt).',
    }),
    nextAttemptAt: Type.Union([TimestampSchema, Type.Null()], {
      description: 'When a `pending` event is tried next; null otherwise.',
    }),
    receivedAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
  { additionalProperties: false },
)
export type IntegrationEventResource = Static<typeof IntegrationEventResourceSchema>

export const IntegrationEventListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(IntegrationEventResourceSchema) },
  {
    additionalProperties: false,
    examples: [
      {
        object: 'list',
        data: [
          {
            object: 'IntegrationEvent',
            dedupeKey: 'subscription_payment_success:1:2030-01-01T00:00:01.000000Z',
            eventType: 'subscription_payment_success',
            status: 'pending',
            outcome:
              'No license is linked to subscription 1 yet (its purchase has not arrived). Attempt 1; next at 2030-01-01T00:01:00.000Z.',
            attempts: 1,
            nextAttemptAt: '2030-01-01T00:01:00.000Z',
            receivedAt: exampleTime,
            updatedAt: exampleTime,
          },
          {
            object: 'IntegrationEvent',
            dedupeKey: 'order_created:1:2030-01-01T00:00:00.000000Z',
            eventType: 'order_created',
            status: 'processed',
            outcome:
              'Created license lic_7fQx2mNc4RtYp9LkWv3bHs for customer cus_4nQw8ZkT2vLm6XcPb9RsJd (darlene@example.com).',
            attempts: 1,
            nextAttemptAt: null,
            receivedAt: exampleTime,
            updatedAt: exampleTime,
          },
        ],
      },
    ],
  },
)

/** The answer to a provider's delivery. */
export const IntegrationReceiptSchema = Type.Object(
  {
    received: Type.Literal(true),
    duplicate: Type.Boolean({
      description: 'true: this event was already recorded; nothing was done again.',
    }),
  },
  { additionalProperties: false, examples: [{ received: true, duplicate: false }] },
)
