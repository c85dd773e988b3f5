import { type Static, Type } from 'typebox'
import { TimestampSchema } from './common.js'

export const OperatorIdSchema = Type.TemplateLiteral([Type.Literal('opr_'), Type.String()], {
  maxLength: 64,
  examples: ['opr_7Hq2LmXv9TbR4KcWn3JsYd'],
})
export type OperatorId = Static<typeof OperatorIdSchema>

export const operatorRoleNames = ['owner', 'admin', 'support', 'viewer'] as const

export const OperatorRoleSchema = Type.Enum([...operatorRoleNames], {
  description:
    '`owner`: everything, operator accounts too; `admin`: everything but operator accounts; `support`: reads everything, revokes and reinstates licenses, deactivates machines, sends portal links; `viewer`: reads only.',
})
export type OperatorRoleName = Static<typeof OperatorRoleSchema>

export const OperatorStatusSchema = Type.Enum(['invited', 'active', 'disabled'], {
  description: '`invited`: has not chosen a password yet; `active`: may sign in; `disabled`: may not.',
})

const OperatorEmailSchema = Type.String({
  minLength: 3,
  maxLength: 320,
  pattern: '^[^\\s@]+@[^\\s@]+$',
  description: 'Unique, compared case-insensitively.',
  examples: ['grace@example.com'],
})

const OperatorNameSchema = Type.String({ minLength: 1, maxLength: 200, examples: ['Grace Hopper'] })

export const exampleOperator = {
  id: 'opr_7Hq2LmXv9TbR4KcWn3JsYd',
  object: 'Operator',
  email: 'grace@example.com',
  name: 'Grace Hopper',
  role: 'support',
  status: 'active',
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: '2030-01-01T00:00:00.000Z',
}

/** A person who signs in to the dashboard. Never carries a password or a link's secret. */
export const OperatorResourceSchema = Type.Object(
  {
    id: OperatorIdSchema,
    object: Type.Literal('Operator'),
    email: OperatorEmailSchema,
    name: OperatorNameSchema,
    role: OperatorRoleSchema,
    status: OperatorStatusSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  },
  { additionalProperties: false, examples: [exampleOperator] },
)
export type OperatorResource = Static<typeof OperatorResourceSchema>

export const OperatorListSchema = Type.Object(
  { data: Type.Array(OperatorResourceSchema) },
  { additionalProperties: false, examples: [{ data: [exampleOperator] }] },
)

export const InviteOperatorBodySchema = Type.Object(
  { email: OperatorEmailSchema, name: OperatorNameSchema, role: OperatorRoleSchema },
  {
    additionalProperties: false,
    examples: [{ email: 'grace@example.com', name: 'Grace Hopper', role: 'support' }],
  },
)
export type InviteOperatorBody = Static<typeof InviteOperatorBodySchema>

export const InvitedOperatorSchema = Type.Object(
  {
    operator: OperatorResourceSchema,
    invitationUrl: Type.String({
      maxLength: 2048,
      description:
        'The one-time link where the operator chooses a password: works once, for 7 days, and is shown only in this answer. Hand it to the person.',
      examples: ['https://licenses.example.com/dashboard/invitation#Zr4Qw8…'],
    }),
    mailed: Type.Boolean({
      description:
        'The link was also mailed to the operator (mail is configured: KEYTURN_SMTP_URL). False: hand the link over yourself.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        operator: { ...exampleOperator, status: 'invited' },
        invitationUrl: 'https://licenses.example.com/dashboard/invitation#Zr4Qw8…',
        mailed: true,
      },
    ],
  },
)

export const PasswordResetLinkSchema = Type.Object(
  {
    resetUrl: Type.String({
      maxLength: 2048,
      description:
        'The one-time link where the operator chooses a new password: works once, for one hour, and is shown only in this answer. Using it ends every session of the operator.',
    }),
    mailed: Type.Boolean({
      description:
        'The link was also mailed to the operator (mail is configured: KEYTURN_SMTP_URL). False: hand the link over yourself.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ resetUrl: 'https://licenses.example.com/dashboard/password-reset#Qk7Lp2…', mailed: true }],
  },
)

export const UpdateOperatorBodySchema = Type.Object(
  {
    role: Type.Optional(OperatorRoleSchema),
    status: Type.Optional(
      Type.Enum(['active', 'disabled'], {
        description:
          '`disabled` ends the operator’s sessions and refuses its sign-ins; `active` allows them again.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ role: 'admin' }, { status: 'disabled' }] },
)
export type UpdateOperatorBody = Static<typeof UpdateOperatorBodySchema>

/** A signed-in browser of an operator. Never carries the cookie's value or the CSRF token. */
export const OperatorSessionSchema = Type.Object(
  {
    id: Type.String({ maxLength: 64, examples: ['3f1c2a9e-6b7d-4e8f-9a0b-1c2d3e4f5a6b'] }),
    object: Type.Literal('OperatorSession'),
    createdAt: TimestampSchema,
    lastSeenAt: TimestampSchema,
    idleExpiresAt: Type.String({
      format: 'date-time',
      description: 'The session ends at this time unless a request comes first (each moves it on).',
    }),
    expiresAt: Type.String({
      format: 'date-time',
      description: 'The session ends at this time whatever happens.',
    }),
    current: Type.Boolean({ description: 'The session this request was made with.' }),
  },
  { additionalProperties: false },
)
export type OperatorSession = Static<typeof OperatorSessionSchema>

const exampleSession = {
  id: '3f1c2a9e-6b7d-4e8f-9a0b-1c2d3e4f5a6b',
  object: 'OperatorSession',
  createdAt: '2030-01-01T00:00:00.000Z',
  lastSeenAt: '2030-01-01T00:10:00.000Z',
  idleExpiresAt: '2030-01-01T00:40:00.000Z',
  expiresAt: '2030-01-01T12:00:00.000Z',
  current: false,
}

export const OperatorSessionListSchema = Type.Object(
  { data: Type.Array(OperatorSessionSchema) },
  { additionalProperties: false, examples: [{ data: [exampleSession] }] },
)

export const OperatorSessionParamsSchema = Type.Object(
  { id: OperatorIdSchema, sessionId: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
)
