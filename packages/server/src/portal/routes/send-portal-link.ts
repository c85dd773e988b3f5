import { CustomerIdSchema, IdParamsSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import type { App } from '../../http/app-types.js'
import { problemResponses } from '../../http/responses.js'
import type { PortalService } from '../portal-service.js'

/** `POST /customers/:id/portal-link`: mails the customer a portal sign-in code (admin keys). */
export function registerSendPortalLink(api: App, portal: PortalService, portalEnabled: boolean): void {
  api.post(
    '/customers/:id/portal-link',
    {
      schema: {
        operationId: 'sendPortalLink',
        summary: 'Mail a customer a sign-in code for the customer portal',
        description:
          "Roles: admin. Queues a mail to the customer's address with a one-time 6-digit code (10 minutes, single use) and a link to the customer portal, so a vendor's own site can send its customers there. Sent whatever the customer's `mailOptOut` says (it is essential mail). Answers 202 with no body once the mail is queued; the delivery log (`GET /emails`) shows its progress, never the code. 409 `portal_unavailable` while the portal is off (`KEYTURN_PORTAL`) or the server sends no mail.",
        tags: ['customers'],
        params: IdParamsSchema(CustomerIdSchema),
        response: {
          202: Type.Null({ description: 'The mail is queued.' }),
          ...problemResponses('forbidden', 'customer_not_found', 'portal_unavailable'),
        },
      },
    },
    async (request, reply) => {
      await portal.sendPortalLink(request.principal, request.params.id, portalEnabled)
      // No body at all (not `null`): Fastify serialises nothing when the payload is undefined.
      return reply.code(202).send(undefined as unknown as null)
    },
  )
}
