import {
  CustomerIdSchema,
  IdParamsSchema,
  PortalSessionListSchema,
  PortalSessionParamsSchema,
  type PortalSessionResource,
} from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { Session } from '../../sessions/session.js'
import type { PortalService } from '../portal-service.js'

function toPortalSessionResource(session: Session): PortalSessionResource {
  return {
    id: session.id,
    object: 'PortalSession',
    customerId: session.subjectId as PortalSessionResource['customerId'],
    createdAt: session.createdAt.toISOString(),
    lastSeenAt: session.lastSeenAt.toISOString(),
    idleExpiresAt: session.idleExpiresAt.toISOString(),
    expiresAt: session.expiresAt.toISOString(),
  }
}

/** A customer's customer-portal sessions: listed and revoked by admin keys (the dashboard's customer screen). */
export function registerPortalSessions(api: App, portal: PortalService): void {
  api.get(
    '/customers/:id/portal-sessions',
    {
      schema: {
        operationId: 'listPortalSessions',
        summary: "List a customer's portal sessions",
        description:
          'Roles: admin. The live sessions the customer holds in the customer portal (newest first): where they are signed in now.',
        tags: ['customers'],
        params: IdParamsSchema(CustomerIdSchema),
        response: {
          200: PortalSessionListSchema,
          ...problemResponses('forbidden', 'customer_not_found'),
        },
      },
    },
    async (request) => {
      const sessions = await portal.listSessions(request.principal, request.params.id)
      return { object: 'list' as const, data: sessions.map(toPortalSessionResource) }
    },
  )

  api.delete(
    '/customers/:id/portal-sessions/:sessionId',
    {
      schema: {
        operationId: 'revokePortalSession',
        summary: "Revoke one of a customer's portal sessions",
        description:
          'Roles: admin. Signs the customer out of that session at once: its next page asks them to sign in again. A session that has ended already answers 204 too; 404 `customer_not_found` when the customer does not exist.',
        tags: ['customers'],
        params: PortalSessionParamsSchema,
        response: {
          204: Type.Null({ description: 'Revoked' }),
          ...problemResponses('forbidden', 'customer_not_found'),
        },
      },
    },
    async (request, reply) => {
      await portal.revokeSession(request.principal, request.params.id, request.params.sessionId)
      return reply.code(204).send(null)
    },
  )
}
