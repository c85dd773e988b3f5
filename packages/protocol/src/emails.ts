/**
 * @module The mail delivery log: what was sent to whom's account and how it went, never the
 * message itself (no recipient address, subject, body or code).
 */
import { type Static, Type } from 'typebox'
import {
  CustomerIdSchema,
  listQueryProperties,
  PaginatedSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import { exampleProductId, exampleTime } from './examples.js'

export const EmailIdSchema = Type.TemplateLiteral([Type.Literal('mail_'), Type.String()], {
  maxLength: 64,
  examples: ['mail_3Nc8VqLx2TmRp7KbW5sYhD'],
})

export const EmailStatusSchema = Type.Union(
  [Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')],
  {
    description:
      '`pending`: waiting to be sent (again); `sent`: accepted by the SMTP server; `failed`: given up.',
  },
)

export const EmailResourceSchema = Type.Object(
  {
    id: EmailIdSchema,
    object: Type.Literal('Email'),
    template: Type.String({
      description:
        'Which mail: `license-issued`, `license-renewed`, `license-expiring`, `license-expired`, `machine-deactivated`.',
    }),
    productId: Type.Union([ProductIdSchema, Type.Null()]),
    customerId: Type.Union([CustomerIdSchema, Type.Null()]),
    status: EmailStatusSchema,
    attempts: Type.Integer({ minimum: 0 }),
    lastAttemptAt: Type.Union([TimestampSchema, Type.Null()]),
    lastError: Type.Union([Type.String({ maxLength: 500 }), Type.Null()], {
      description: "The SMTP server's answer to the last failed attempt, or null.",
    }),
    nextAttemptAt: Type.Union([TimestampSchema, Type.Null()], {
      description: 'When it is sent (again); null once sent or given up.',
    }),
    sentAt: Type.Union([TimestampSchema, Type.Null()]),
    createdAt: TimestampSchema,
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'mail_3Nc8VqLx2TmRp7KbW5sYhD',
        object: 'Email',
        template: 'license-issued',
        productId: exampleProductId,
        customerId: 'cus_5Tq8LmVx2RcNp7KbW3sYhD',
        status: 'pending',
        attempts: 1,
        lastAttemptAt: exampleTime,
        lastError: '451 try again later',
        nextAttemptAt: '2030-01-01T00:00:30.000Z',
        sentAt: null,
        createdAt: exampleTime,
      },
    ],
  },
)
export type EmailResource = Static<typeof EmailResourceSchema>

export const ListEmailsQuerySchema = Type.Object({ ...listQueryProperties }, { additionalProperties: false })
export type ListEmailsQuery = Static<typeof ListEmailsQuerySchema>
export const EmailListSchema = PaginatedSchema(EmailResourceSchema)
