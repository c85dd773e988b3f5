import { OperatorSsoAvailableSchema } from '@keyturn/protocol'
import { Type } from 'typebox'
import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { dashboardPath } from '../../http/dashboard.js'
import { problemResponses } from '../../http/responses.js'
import { apiCacheControl, apiSecurityHeaders, registerSecurityHeaders } from '../../http/security-headers.js'
import { isSecureRequest, readSessionCookie, sessionCookie } from '../../http/session-cookie.js'
import type { AudienceSettings } from '../../sessions/session.js'
import type { StartedSession } from '../../sessions/session-service.js'
import { type OidcService, oidcRequestMs } from '../oidc.js'
import type { OperatorService } from '../operator-service.js'
import { operatorAuthPath } from './operator-auth-routes.js'

export const oidcPath = `${operatorAuthPath}/oidc`

const open = { tags: ['operator-sign-in'], security: [] }
/** A redirect answer: no body, the target in `Location`. */
const redirect = (description: string) =>
  Type.Null({ description, headers: { location: { type: 'string', description: 'The target.' } } })

/** The cookie carrying the encrypted state, nonce and PKCE verifier of one sign-in, only to the callback. */
const requestCookie: AudienceSettings = {
  cookieName: 'keyturn_oidc_request',
  cookiePath: oidcPath,
  idleTimeoutMs: oidcRequestMs,
  absoluteTimeoutMs: oidcRequestMs,
}

function requestCookieValue(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${requestCookie.cookieName}=${value}; Max-Age=${maxAgeSeconds}; Path=${oidcPath}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

/**
 * Single sign-on (registered only when KEYTURN_OIDC_ISSUER is set): `GET /operator/oidc/start`
 * sends the browser to the provider; the provider sends it back to `GET /operator/oidc/callback`,
 * which sets the session cookie and sends the browser to the dashboard (which reads the CSRF token
 * from `GET /operator/me`, as after a reload).
 */
export function registerOperatorOidcRoutes(app: App, operators: OperatorService, oidc: OidcService): void {
  app.register(
    async (scope: App) => {
      registerSecurityHeaders(scope, apiSecurityHeaders, apiCacheControl)
      const settings = operators.sessionSettings()

      // The dashboard asks whether to offer "Sign in with SSO" (without single sign-on: 404).
      scope.get(
        '/',
        {
          schema: {
            ...open,
            operationId: 'getOperatorSso',
            summary: 'Whether single sign-on is offered',
            description:
              'The dashboard asks it to offer “Sign in with SSO”. Every /operator/oidc route exists only when KEYTURN_OIDC_ISSUER is set: otherwise this answers 404.',
            response: { 200: OperatorSsoAvailableSchema, ...problemResponses('rate_limited') },
          },
        },
        async () => ({ enabled: true as const }),
      )

      scope.get(
        '/start',
        {
          schema: {
            ...open,
            operationId: 'startOperatorSso',
            summary: 'Start single sign-on (a browser redirect)',
            description:
              'Sends the browser to the identity provider (302), with a short-lived httpOnly cookie holding the encrypted state, nonce and PKCE verifier for the callback. Open it in the browser; it is no call for a program.',
            response: {
              302: redirect('To the identity provider’s authorization endpoint.'),
              ...problemResponses('sso_refused', 'rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const { url, stateCookie } = await oidc.start()
          reply.header(
            'set-cookie',
            requestCookieValue(stateCookie, Math.floor(oidcRequestMs / 1000), isSecureRequest(request)),
          )
          return reply.redirect(url, 302)
        },
      )

      scope.get(
        '/callback',
        {
          schema: {
            ...open,
            operationId: 'finishOperatorSso',
            summary: 'Single sign-on callback (a browser redirect)',
            description:
              'Where the provider sends the browser back (`KEYTURN_PUBLIC_URL` + `/operator/oidc/callback`, registered with the provider). Sets the session cookie and sends the browser to the dashboard (303); a refusal sends a browser to the sign-in page with `?sso-error=<code>` (303) and answers other clients with the problem. Accounts are made for verified addresses of the allowed domains only, and linked by issuer and subject, never by email.',
            response: {
              303: redirect('To the dashboard (signed in), or to its sign-in page with the error’s code.'),
              ...problemResponses('sso_refused', 'rate_limited'),
            },
          },
        },
        async (request, reply) => {
          const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : ''
          const secure = isSecureRequest(request)
          // Whatever happens, the request's cookie is used up.
          reply.header('set-cookie', requestCookieValue('', 0, secure))
          let started: StartedSession
          try {
            ;({ started } = await oidc.finish(
              new URL(`${oidc.redirectUri}${query}`),
              readSessionCookie(requestCookie, request.headers.cookie),
            ))
          } catch (error) {
            // A browser goes back to the sign-in page, which says what went wrong (by code only: a
            // link cannot make the page show words of its own); other clients get the problem.
            if (error instanceof DomainError && (request.headers.accept ?? '').includes('text/html')) {
              return reply.redirect(`${dashboardPath}/?sso-error=${error.code}`, 303)
            }
            throw error
          }
          reply.header('set-cookie', [
            requestCookieValue('', 0, secure),
            sessionCookie(settings, started.token, secure),
          ])
          return reply.redirect(`${dashboardPath}/`, 303)
        },
      )
    },
    { prefix: oidcPath },
  )
}
