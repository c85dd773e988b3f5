import type { FastifyRequest } from 'fastify'
import type { AudienceSettings } from '../sessions/session.js'

/**
 * Whether the request came over HTTPS: Fastify's `request.protocol` believes `X-Forwarded-Proto`
 * only when KEYTURN_TRUST_PROXY trusts the proxy in front.
 */
export function isSecureRequest(request: FastifyRequest): boolean {
  return request.protocol === 'https'
}

function attributes(settings: AudienceSettings, secure: boolean): string {
  return `Path=${settings.cookiePath}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

/** The Set-Cookie value for a new session: a session cookie (no Max-Age), ended by the server's expiry. */
export function sessionCookie(settings: AudienceSettings, token: string, secure: boolean): string {
  return `${settings.cookieName}=${token}; ${attributes(settings, secure)}`
}

/** The Set-Cookie value that removes the session cookie (sign-out, revoked, expired). */
export function clearedSessionCookie(settings: AudienceSettings, secure: boolean): string {
  return `${settings.cookieName}=; Max-Age=0; ${attributes(settings, secure)}`
}

/** The value of the audience's cookie in the request's Cookie header, if any. */
export function readSessionCookie(
  settings: AudienceSettings,
  cookieHeader: string | undefined,
): string | undefined {
  if (cookieHeader === undefined || cookieHeader.length > 8192) {
    return undefined
  }
  for (const part of cookieHeader.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === settings.cookieName) {
      return part.slice(at + 1).trim()
    }
  }
  return undefined
}
