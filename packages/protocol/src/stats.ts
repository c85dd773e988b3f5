import { type Static, Type } from 'typebox'
import { ProductIdSchema } from './common.js'

const dayPattern = '^\\d{4}-\\d{2}-\\d{2}$'

export const StatsQuerySchema = Type.Object(
  {
    from: Type.Optional(
      Type.String({
        pattern: dayPattern,
        description: 'The first UTC day (`YYYY-MM-DD`, inclusive). Default: 29 days before `to`.',
        examples: ['2026-11-01'],
      }),
    ),
    to: Type.Optional(
      Type.String({
        pattern: dayPattern,
        description:
          'The last UTC day (`YYYY-MM-DD`, inclusive). Default: today (UTC). At most 366 days from `from`.',
        examples: ['2026-11-30'],
      }),
    ),
    // Only this product's figures; default: every product the key may see (the route's description).
    productId: Type.Optional(ProductIdSchema),
  },
  { additionalProperties: false },
)
export type StatsQuery = Static<typeof StatsQuerySchema>

const count = (description: string) => Type.Integer({ minimum: 0, description })

export const StatsCountsSchema = Type.Object(
  {
    validationsValid: count('Validations that answered valid.'),
    validationsInvalid: count('Validations of a known license that answered not valid (any reason).'),
    activations: count('Machines that took a seat (a repeat activation of the same machine is not counted).'),
    deactivations: count(
      'Machines deactivated: by an API key, by the customer portal, or a lapsed floating seat swept.',
    ),
    licensesCreated: count('Licenses created.'),
    licensesRenewed: count('Licenses renewed.'),
    licensesRevoked: count('Licenses revoked.'),
    licensesSold: count(
      'Licenses created by a payment-provider integration for a purchase (also counted in `licensesCreated`).',
    ),
    providerRenewals: count(
      'Licenses renewed by a payment-provider integration for a subscription payment (also counted in `licensesRenewed`).',
    ),
    paymentFailures: count(
      "Subscription payments that failed: a license entered payment grace (a provider's failed payment).",
    ),
    refundRevocations: count(
      'Licenses revoked by a payment-provider integration for a refund or chargeback (also counted in `licensesRevoked`).',
    ),
  },
  { additionalProperties: false },
)
export type StatsCounts = Static<typeof StatsCountsSchema>

export const StatsDaySchema = Type.Object(
  {
    date: Type.String({ pattern: dayPattern, description: 'The UTC day.' }),
    ...StatsCountsSchema.properties,
  },
  { additionalProperties: false },
)
export type StatsDay = Static<typeof StatsDaySchema>

export const StatsSchema = Type.Object(
  {
    object: Type.Literal('Stats'),
    from: Type.String({ pattern: dayPattern }),
    to: Type.String({ pattern: dayPattern }),
    productId: Type.Union([ProductIdSchema, Type.Null()], {
      description: 'The product the figures are limited to; null: every product the key may see.',
    }),
    days: Type.Array(StatsDaySchema, {
      maxItems: 367,
      description:
        'One entry per UTC day from `from` to `to`, oldest first; a day without activity has zeros.',
    }),
    totals: Type.Object(StatsCountsSchema.properties, {
      additionalProperties: false,
      description: 'The sums over `days`.',
    }),
    now: Type.Object(
      {
        at: Type.String({ format: 'date-time', description: 'When the figures below were read.' }),
        activeMachines: count(
          'Activations holding a seat now (a floating seat whose heartbeat lapsed is not counted).',
        ),
        licensesExpiringSoon: count('Licenses not revoked whose expiration date falls in the next 30 days.'),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        object: 'Stats',
        from: '2026-11-29',
        to: '2026-11-30',
        productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
        days: [
          {
            date: '2026-11-29',
            validationsValid: 1520,
            validationsInvalid: 12,
            activations: 40,
            deactivations: 3,
            licensesCreated: 25,
            licensesRenewed: 4,
            licensesRevoked: 1,
            licensesSold: 20,
            providerRenewals: 3,
            paymentFailures: 1,
            refundRevocations: 1,
          },
          {
            date: '2026-11-30',
            validationsValid: 980,
            validationsInvalid: 7,
            activations: 22,
            deactivations: 1,
            licensesCreated: 11,
            licensesRenewed: 2,
            licensesRevoked: 0,
            licensesSold: 9,
            providerRenewals: 2,
            paymentFailures: 0,
            refundRevocations: 0,
          },
        ],
        totals: {
          validationsValid: 2500,
          validationsInvalid: 19,
          activations: 62,
          deactivations: 4,
          licensesCreated: 36,
          licensesRenewed: 6,
          licensesRevoked: 1,
          licensesSold: 29,
          providerRenewals: 5,
          paymentFailures: 1,
          refundRevocations: 1,
        },
        now: { at: '2026-11-30T14:05:00.000Z', activeMachines: 811, licensesExpiringSoon: 17 },
      },
    ],
  },
)
export type Stats = Static<typeof StatsSchema>
