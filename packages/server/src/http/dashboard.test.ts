import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { buildApp } from '../app.js'
import { deriveSecretKeys } from '../core/secrets.js'
import { connect } from '../storage/connect.js'
import { FixedClock } from '../testing/fixed-clock.js'

const indexHtml =
  '<!doctype html><title>Keyturn dashboard</title><script type="module" src="/dashboard/assets/index-abc123.js"></script>'

/** A stand-in for packages/dashboard/dist: what the server does with it does not depend on its content. */
function builtDashboard(cleanUps: (() => Promise<void> | void)[]): string {
  const root = mkdtempSync(join(tmpdir(), 'keyturn-dashboard-'))
  cleanUps.push(() => rmSync(root, { recursive: true, force: true }))
  mkdirSync(join(root, 'assets'))
  writeFileSync(join(root, 'index.html'), indexHtml)
  writeFileSync(join(root, 'assets', 'index-abc123.js'), 'console.log("dashboard")')
  return root
}

function appServing(cleanUps: (() => Promise<void> | void)[], dashboardRoot: string | undefined) {
  // No database access happens here: the dashboard's files are static.
  const connection = connect({ kind: 'sqlite', path: ':memory:' })
  const { app } = buildApp({
    db: connection.db,
    clock: new FixedClock('2030-01-01T00:00:00.000Z'),
    secretKeys: deriveSecretKeys('test-master-secret-with-at-least-32-characters'),
    logger: false,
    dashboardRoot,
  })
  cleanUps.push(async () => {
    await app.close()
    await connection.close()
  })
  return app
}

// The files are read-only, so one app serves every test: building an app takes about a second.
describe('the dashboard route', () => {
  const cleanUps: (() => Promise<void> | void)[] = []
  let app: ReturnType<typeof appServing>
  let unbuilt: ReturnType<typeof appServing>
  before(() => {
    app = appServing(cleanUps, builtDashboard(cleanUps))
    unbuilt = appServing(cleanUps, undefined)
  })
  after(async () => {
    for (const cleanUp of cleanUps.reverse()) {
      await cleanUp()
    }
  })

  it('redirects the root, where a person types the address, to the dashboard', async () => {
    const res = await app.inject({ method: 'GET', url: '/' })

    assert.equal(res.statusCode, 302, res.body)
    assert.equal(res.headers.location, '/dashboard')
  })

  it('serves index.html uncached under a strict CSP that forbids framing when /dashboard/ is requested', async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard/' })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.body, indexHtml)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.equal(res.headers['cache-control'], 'no-cache')
    const csp = String(res.headers['content-security-policy'])
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ]) {
      assert.ok(csp.includes(directive), `${directive} in ${csp}`)
    }
    assert.ok(!csp.includes('unsafe-inline'), csp)
    assert.equal(res.headers['x-frame-options'], 'DENY')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.equal(res.headers['referrer-policy'], 'no-referrer')
  })

  it('caches hashed assets for a year when an asset is requested', async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard/assets/index-abc123.js' })

    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /javascript/)
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable')
    assert.ok(String(res.headers['content-security-policy']).includes("script-src 'self'"))
  })

  it('answers index.html for a client-side route when the path is not a file', async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard/licenses/lic_123?status=active' })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.body, indexHtml)
    assert.equal(res.headers['cache-control'], 'no-cache')
    assert.ok(String(res.headers['content-security-policy']).includes("frame-ancestors 'none'"))
  })

  it('answers 404 route_not_found when an asset does not exist', async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard/assets/missing-000.js' })

    assert.equal(res.statusCode, 404)
    assert.equal(res.json().code, 'route_not_found')
  })

  it('answers 503 service_unavailable naming the build command when the dashboard is not built', async () => {
    const res = await unbuilt.inject({ method: 'GET', url: '/dashboard/licenses' })

    assert.equal(res.statusCode, 503)
    assert.equal(res.json().code, 'service_unavailable')
    assert.match(res.json().detail, /npm run build/)
  })

  it('keeps the dashboard out of the OpenAPI document', async () => {
    await app.ready()

    const paths = Object.keys((app.swagger() as { paths: Record<string, unknown> }).paths)

    assert.ok(!paths.some((path) => path.startsWith('/dashboard')), paths.join(', '))
  })
})
