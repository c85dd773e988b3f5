/**
 * @module Helmet's security headers, worked out once per scope instead of once per request.
 *
 * Fast path (issue 14): @fastify/helmet calls `helmet(options)` — which validates every option and
 * builds a middleware for each header — inside two onRequest hooks of EVERY request, one of them
 * async, and gives each reply a `reply.helmet` closure. For a fixed configuration (no CSP nonces)
 * the headers never change, so this runs helmet once at start-up against a recording response and
 * sets the recorded headers in one synchronous hook. Same headers and values; they are given to
 * Fastify (`reply.headers`) rather than to the raw response as helmet did, so Node writes all of a
 * response's headers from Fastify's one object instead of storing each with `setHeader`. Measured in-process on validate by key (bench/inject-cost.mjs,
 * 2026-11-23, load average ~3): ~70 µs of CPU per request less (297 → 225 µs with @fastify/helmet
 * switched off); see bench/README.md "Session 3: where validate's time went".
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import helmet, { type HelmetOptions } from 'helmet'
import type { App } from './app-types.js'

/** Adds helmet's headers for `options` to every response of `scope`. */
export function registerSecurityHeaders(scope: App, options: Readonly<HelmetOptions>): void {
  const headers = Object.fromEntries(securityHeaders(options))
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
