import type { FastifyReply, FastifyRequest } from 'fastify'
import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import { apiCacheControl, apiSecurityHeaders, registerSecurityHeaders } from '../../http/security-headers.js'
import { isSecureRequest, readSessionCookie, sessionCookie } from '../../http/session-cookie.js'
import { csrfHeader } from '../../sessions/session.js'
import type { StartedSession } from '../../sessions/session-service.js'
import type { Operator } from '../operator.js'
import type { OperatorService } from '../operator-service.js'
import { toOperatorResource } from './operators-routes.js'

/** A 429 for too many tries: `Retry-After` says, in whole seconds, when to try again. */
export function sendRateLimited(
  request: FastifyRequest,
  reply: FastifyReply,
  retryAfterMs: number,
  detail: string,
) {
  reply.header('retry-after', String(Math.ceil(retryAfterMs / 1000)))
  return sendProblem(reply, problemFor('rate_limited', detail, request.id))
}

/**
 * What every scope of operator sign-in routes (password, second factor, single sign-on) shares:
 * the API's security headers (they live outside /api/v0 and take no API key; the OpenAPI document
 * lists them under the tag `operator-sign-in`, served from the root), the answer that starts a
 * session (the httpOnly cookie, and in the body the operator and the CSRF token the dashboard sends
 * with every write), and the check of a signed-in operator's request.
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
  /**
   * The operator and session of the request's session cookie; a write must also carry the session's
   * CSRF token in the CSRF header. Anything less is refused with 401.
   */
  const signedInOperator = async (request: FastifyRequest, write: boolean) => {
    const token = readSessionCookie(settings, request.headers.cookie)
    const who = await operators.authenticate(token)
    const csrf = request.headers[csrfHeader]
    if (
      who === undefined ||
      token === undefined ||
      (write && !(await operators.csrfMatches(token, typeof csrf === 'string' ? csrf : undefined)))
    ) {
      throw new DomainError('unauthenticated', 'Not signed in (or the CSRF header is missing).')
    }
    return who
  }
  return { settings, signedIn, signedInOperator }
}
