/**
 * @module Serves the built dashboard (packages/dashboard/dist) at /dashboard: hashed assets cached for
 * a year, index.html never cached and answered for every client-side route, all under a strict
 * Content-Security-Policy. The dashboard is a client of the public API only; nothing here serves data.
 */
import { existsSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { App } from './app-types.js'
import { handleNotFound, problemFor, sendProblem } from './error-handler.js'
import { registerSecurityHeaders } from './security-headers.js'

export const dashboardPath = '/dashboard'

/** The built dashboard's folder, or undefined when it is not built (or not installed). */
export function findDashboard(): string | undefined {
  // The installable CLI (scripts/pack.mjs) carries the dashboard beside its bundle: dist/../dashboard.
  const bundled = fileURLToPath(new URL('../dashboard/', import.meta.url))
  if (existsSync(join(bundled, 'index.html'))) {
    return bundled
  }
  let packageJson: string
  try {
    packageJson = fileURLToPath(import.meta.resolve('@keyturn/dashboard/package.json'))
  } catch {
    return undefined
  }
  const root = join(dirname(packageJson), 'dist')
  return existsSync(join(root, 'index.html')) ? root : undefined
}

/**
 * Only files from this origin, no inline script or style, API calls to this origin only, and never
 * inside a frame (clickjacking): a hostile name that slipped past React's escaping still runs nothing.
 */
export const dashboardCsp = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  // data: for the QR code of a TOTP enrolment (an SVG the server makes; images run no script).
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  manifestSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
}

const immutable = 'public, max-age=31536000, immutable'

export function registerDashboard(app: App, root: string | undefined): void {
  // Browsers ask for /favicon.ico on any page of the origin (the API reference too): the dashboard's icon.
  app.get('/favicon.ico', { schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').redirect(`${dashboardPath}/favicon.svg`, 301),
  )
  app.register(
    async (dashboard: App) => {
      dashboard.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true }
      })
      registerSecurityHeaders(dashboard, {
        contentSecurityPolicy: { useDefaults: false, directives: dashboardCsp },
        frameguard: { action: 'deny' },
        referrerPolicy: { policy: 'no-referrer' },
        // TLS is the reverse proxy's business (docs/operations/production.md); it sets HSTS if it wants.
        strictTransportSecurity: false,
      })
      if (root === undefined) {
        const notBuilt = async (request: { id: string }, reply: Parameters<typeof sendProblem>[0]) =>
          sendProblem(
            reply,
            problemFor(
              'service_unavailable',
              'The dashboard is not built: run `npm run build` (or `npm install`) and restart.',
              request.id,
            ),
          )
        dashboard.get('/', notBuilt)
        dashboard.get('/*', notBuilt)
        return
      }
      await dashboard.register(fastifyStatic, {
        root,
        prefix: '/',
        cacheControl: false,
        setHeaders: (response, path) => {
          response.setHeader('cache-control', path.includes(`${sep}assets${sep}`) ? immutable : 'no-cache')
        },
      })
      // Client-side routes (/dashboard/licenses/lic_…) get the app, which renders them; a missing
      // asset stays a 404.
      dashboard.setNotFoundHandler((request, reply) => {
        const path = request.url.split('?')[0] ?? ''
        if (
          (request.method !== 'GET' && request.method !== 'HEAD') ||
          path.startsWith(`${dashboardPath}/assets/`)
        ) {
          return handleNotFound(request, reply)
        }
        return reply.header('cache-control', 'no-cache').sendFile('index.html')
      })
    },
    { prefix: dashboardPath },
  )
}
