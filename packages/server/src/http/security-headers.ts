/**
 * @module Helmet's security headers, worked out once per scope instead of once per request.
 *
 * Fast path: @fastify/helmet calls `helmet(options)` — which validates every option and
 * builds a middleware for each header — inside two onRequest hooks of EVERY request, one of them
 * async, and gives each reply a `reply.helmet` closure. For a fixed configuration (no CSP nonces)
 * the headers never change, so this runs helmet once at start-up against a recording response and
 * sets the recorded headers in one synchronous hook. Same headers and values; they are given to
 * Fastify (`reply.headers`) rather than to the raw response as helmet did, so Node writes all of a
 * response's headers from Fastify's one object instead of storing each with `setHeader`. Measured in-process on validate by key (bench/inject-cost.mjs,
 * 2026-11-23, load average ~3): ~70 µs of CPU per request less (297 → 225 µs with @fastify/helmet
 * switched off); docs/decisions/0030-api-security-headers.md.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet, { type HelmetOptions } from 'helmet'
import type { App } from './app-types.js'

/**
 * The API's answers are JSON, never a page to render, frame or navigate to. They carry the headers
 * the OWASP REST Security Cheat Sheet ("Security Headers") names for every API response, plus
 * `Referrer-Policy` and `Cross-Origin-Resource-Policy`, which still matter outside a page:
 * `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'`, `X-Frame-Options: DENY`,
 * `Strict-Transport-Security`, `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
 * `Cross-Origin-Resource-Policy: same-origin` and `Cache-Control: no-store` (answers hold license
 * keys and API keys). Helmet's headers that only act on a document are left out (the dashboard's
 * pages keep them): `Cross-Origin-Opener-Policy`, `Origin-Agent-Cluster`, `X-DNS-Prefetch-Control`,
 * `X-Download-Options` (Internet Explorer 8), `X-Permitted-Cross-Domain-Policies` (Flash, Acrobat)
 * and `X-XSS-Protection: 0`. Six headers fewer and one more on every answer (docs/decisions/0030-api-security-headers.md): the app
 * writes and the client reads ~165 bytes less; docs/decisions/0030-api-security-headers.md.
 */
export const apiSecurityHeaders: Readonly<HelmetOptions> = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
}

/** No cache, private or shared, keeps an API answer. */
export const apiCacheControl = { 'cache-control': 'no-store' } as const

/** Adds helmet's headers for `options`, then `extra`, to every response of `scope`. */
export function registerSecurityHeaders(
  scope: App,
  options: Readonly<HelmetOptions>,
  extra: Readonly<Record<string, string>> = {},
): void {
  const headers = { ...Object.fromEntries(securityHeaders(options)), ...extra }
  scope.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers)
    done()
  })
}

/** The headers helmet sets for `options`, in its order. */
export function securityHeaders(options: Readonly<HelmetOptions>): readonly (readonly [string, string])[] {
  const headers = new Map<string, string>()
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.set(name, String(value))
    },
    // helmet removes X-Powered-By, which neither Node nor Fastify sets.
    removeHeader(name: string) {
      headers.delete(name)
    },
  }
  let failure: unknown
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    failure = error
  })
  if (failure !== undefined) {
    throw failure
  }
  return [...headers]
}
