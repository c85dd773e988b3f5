import { type Static, Type } from 'typebox'
import { ProductIdSchema } from './common.js'
import { LicenseKeySchema } from './licenses.js'
import { NonceSchema } from './signed-answers.js'

/** `increment` when a usage request does not give one. */
export const defaultUsageIncrement = 1
/** Largest `increment` of one request. */
export const maxUsageIncrement = 1_000_000

export const UsageIncrementSchema = Type.Integer({
  minimum: 1,
  maximum: maxUsageIncrement,
  default: defaultUsageIncrement,
  description: `Uses to add (default ${defaultUsageIncrement}).`,
  examples: [1],
})

/** `POST /licenses/:id/usage`. */
export const IncrementUsageBodySchema = Type.Object(
  { increment: Type.Optional(UsageIncrementSchema) },
  { additionalProperties: false, examples: [{ increment: 1 }] },
)
export type IncrementUsageBody = Static<typeof IncrementUsageBodySchema>

/** `POST /licenses/usage`: what an application sends when the user uses a metered feature. */
export const IncrementUsageByKeyBodySchema = Type.Object(
  {
    key: LicenseKeySchema,
    productId: ProductIdSchema,
    increment: Type.Optional(UsageIncrementSchema),
    nonce: Type.Optional(NonceSchema),
  },
  {
    additionalProperties: false,
    examples: [
      { key: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A', productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ', increment: 1 },
    ],
  },
)
export type IncrementUsageByKeyBody = Static<typeof IncrementUsageByKeyBodySchema>
