/**
 * @module The customer portal's resources in the management API: a customer's portal sessions
 * (listed and revoked by admin keys).
 */
import { type Static, Type } from 'typebox'
import { CustomerIdSchema, TimestampSchema } from './common.js'
import { exampleCustomer, exampleTime } from './examples.js'

export const PortalSessionIdSchema = Type.String({
  format: 'uuid',
  examples: ['0b9f7c2e-5a41-4f7e-9a0c-3d2b1e6f8a90'],
})

const examplePortalSession = {
  id: '0b9f7c2e-5a41-4f7e-9a0c-3d2b1e6f8a90',
  object: 'PortalSession',
  customerId: exampleCustomer.id,
  createdAt: exampleTime,
  lastSeenAt: exampleTime,
  idleExpiresAt: '2030-01-01T00:30:00.000Z',
  expiresAt: '2030-01-02T00:00:00.000Z',
} as const

export const PortalSessionResourceSchema = Type.Object(
  {
    id: PortalSessionIdSchema,
    object: Type.Literal('PortalSession'),
    customerId: CustomerIdSchema,
    createdAt: TimestampSchema,
    lastSeenAt: TimestampSchema,
    idleExpiresAt: Type.String({
      format: 'date-time',
      description: 'The session ends then unless the customer uses the portal first (each page moves it on).',
    }),
    expiresAt: Type.String({ format: 'date-time', description: 'The session ends then whatever happens.' }),
  },
  {
    additionalProperties: false,
    examples: [examplePortalSession],
  },
)
export type PortalSessionResource = Static<typeof PortalSessionResourceSchema>

export const PortalSessionListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(PortalSessionResourceSchema, { description: 'Live sessions, newest first.' }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        object: 'list',
        data: [examplePortalSession],
      },
    ],
  },
)
export type PortalSessionList = Static<typeof PortalSessionListSchema>

export const PortalSessionParamsSchema = Type.Object(
  { id: CustomerIdSchema, sessionId: PortalSessionIdSchema },
  { additionalProperties: false },
)
