import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../../http/app-types.js'
import { apiCacheControl, apiSecurityHeaders, registerSecurityHeaders } from '../../http/security-headers.js'
import { isSecureRequest, sessionCookie } from '../../http/session-cookie.js'
import type { StartedSession } from '../../sessions/session-service.js'
import type { Operator } from '../operator.js'
import type { OperatorService } from '../operator-service.js'
import { toOperatorResource } from './operators-routes.js'

/**
 * What every scope of operator sign-in routes (password, second factor, single sign-on) shares:
 * the API's security headers (they live outside /api/v0 and take no API key; the OpenAPI document
 * lists them under the tag `operator-sign-in`, served from the root), and the answer that starts a session: the httpOnly cookie, and in the body the
 * operator and the CSRF token the dashboard sends with every write.
 */
export function operatorSignInScope(scope: App, operators: OperatorService) {
  registerSecurityHeaders(scope, apiSecurityHeaders, apiCacheControl)
  const settings = operators.sessionSettings()
  const signedIn = (
    request: FastifyRequest,
    reply: FastifyReply,
    operator: Operator,
    started: StartedSession,
  ) => {
    reply.header('set-cookie', sessionCookie(settings, started.token, isSecureRequest(request)))
    return { operator: toOperatorResource(operator), csrfToken: started.csrfToken }
  }
  return { settings, signedIn }
}
