import { PortalSessionParamsSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { PortalService } from '../portal-service.js'

/** `DELETE /customers/:id/portal-sessions/:sessionId`: signs the customer out of one portal session (admin keys). */
export function registerRevokePortalSession(api: App, portal: PortalService): void {
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
