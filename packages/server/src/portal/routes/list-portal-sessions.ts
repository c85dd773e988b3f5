import {
  CustomerIdSchema,
  IdParamsSchema,
  PortalSessionListSchema,
  type PortalSessionResource,
} from '@keyturn/protocol'
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

/** `GET /customers/:id/portal-sessions`: a customer's live portal sessions (admin keys). */
export function registerListPortalSessions(api: App, portal: PortalService): void {
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
}
