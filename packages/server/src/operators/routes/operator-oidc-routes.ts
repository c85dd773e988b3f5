import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { dashboardPath } from '../../http/dashboard.js'
import { apiCacheControl, apiSecurityHeaders, registerSecurityHeaders } from '../../http/security-headers.js'
import { isSecureRequest, readSessionCookie, sessionCookie } from '../../http/session-cookie.js'
import type { AudienceSettings } from '../../sessions/session.js'
import type { StartedSession } from '../../sessions/session-service.js'
import { type OidcService, oidcRequestMs } from '../oidc.js'
import type { OperatorService } from '../operator-service.js'
import { operatorAuthPath } from './operator-auth-routes.js'

export const oidcPath = `${operatorAuthPath}/oidc`

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
      scope.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true }
      })
      registerSecurityHeaders(scope, apiSecurityHeaders, apiCacheControl)
      const settings = operators.sessionSettings()

      // The dashboard asks whether to offer "Sign in with SSO" (without single sign-on: 404).
      scope.get('/', async () => ({ enabled: true }))

      scope.get('/start', async (request, reply) => {
        const { url, stateCookie } = await oidc.start()
        reply.header(
          'set-cookie',
          requestCookieValue(stateCookie, Math.floor(oidcRequestMs / 1000), isSecureRequest(request)),
        )
        return reply.redirect(url, 302)
      })

      scope.get('/callback', async (request, reply) => {
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
      })
    },
    { prefix: oidcPath },
  )
}
