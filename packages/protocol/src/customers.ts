import { type Static, Type } from 'typebox'
import { CustomerIdSchema, listQueryProperties, PaginatedSchema, TimestampSchema } from './common.js'
import { exampleCustomer } from './examples.js'
import { MetadataInputSchema, MetadataSchema } from './metadata.js'

export const CustomerEmailSchema = Type.String({
  minLength: 3,
  maxLength: 254,
  format: 'email',
  description: 'Unique, compared case-insensitively.',
  examples: ['ada@example.com'],
})
export const MailOptOutSchema = Type.Boolean({
  description:
    'The customer receives no non-essential mail (license issued, renewed, machine deactivated). Default false.',
})

export const CustomerNameSchema = Type.String({ minLength: 1, maxLength: 200, examples: ['Ada Lovelace'] })

export const CustomerResourceSchema = Type.Object(
  {
    id: CustomerIdSchema,
    object: Type.Literal('Customer'),
    email: CustomerEmailSchema,
    name: Type.Union([CustomerNameSchema, Type.Null()]),
    metadata: MetadataSchema,
    mailOptOut: MailOptOutSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
  { additionalProperties: false, examples: [exampleCustomer] },
)
export type CustomerResource = Static<typeof CustomerResourceSchema>

export const CreateCustomerBodySchema = Type.Object(
  {
    email: CustomerEmailSchema,
    name: Type.Optional(Type.Union([CustomerNameSchema, Type.Null()])),
    metadata: Type.Optional(MetadataInputSchema),
    mailOptOut: Type.Optional(MailOptOutSchema),
  },
  {
    additionalProperties: false,
    examples: [{ email: 'ada@example.com', name: 'Ada Lovelace', metadata: { stripeCustomerId: 'cus_Qh7' } }],
  },
)
export type CreateCustomerBody = Static<typeof CreateCustomerBodySchema>

export const UpdateCustomerBodySchema = Type.Object(
  {
    email: Type.Optional(CustomerEmailSchema),
    name: Type.Optional(Type.Union([CustomerNameSchema, Type.Null()])),
    metadata: Type.Optional(MetadataInputSchema),
    mailOptOut: Type.Optional(MailOptOutSchema),
  },
  { additionalProperties: false, examples: [{ name: 'Ada King', metadata: { vip: true } }] },
)
export type UpdateCustomerBody = Static<typeof UpdateCustomerBodySchema>

export const ListCustomersQuerySchema = Type.Object(
  { ...listQueryProperties },
  { additionalProperties: false },
)
export type ListCustomersQuery = Static<typeof ListCustomersQuerySchema>

export const CustomerListSchema = PaginatedSchema(CustomerResourceSchema)

export const customerSortFields = ['createdAt', 'email', 'name'] as const
export const customerFilterFields = ['email', 'createdAt'] as const
