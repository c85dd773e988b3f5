import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  browserBundleOptions,
  bundleClientForBrowser,
  launchChromium,
  skipWithoutChromium,
} from '@keyturn/server/testing/browser'
import { buildTestApp } from '@keyturn/server/testing/build-test-app'
import { sqliteTestDatabase } from '@keyturn/server/testing/each-database'
import { serveHttp, startTestServer } from '@keyturn/server/testing/listening-app'
import { build } from 'esbuild'

const page = '<!doctype html><meta charset="utf-8"><title>Keyturn offline validation</title>'

/**
 * A browser application's heartbeat loop, as plain page JavaScript (not compiled by tsx): the timers
 * are the page's own hand-fired ones, so the test decides when each heartbeat happens, without sleeps.
 */
const heartbeatJourney = `
import { KeyturnClient, KeyturnApiError } from '/keyturn-client.js'
const pending = []
let onScheduled
const timers = {
  setTimeout(callback, ms) {
    const timer = { callback, ms }
    pending.push(timer)
    onScheduled?.()
    return timer
  },
  clearTimeout(handle) {
    const index = pending.indexOf(handle)
    if (index >= 0) pending.splice(index, 1)
  },
}
const events = []
let seat
window.journey = {
  events,
  async start(options) {
    const client = new KeyturnClient({ baseUrl: options.baseUrl, apiKey: options.apiKey })
    seat = await client.startHeartbeats({
      key: options.key,
      productId: options.productId,
      fingerprint: 'browser-tab',
      timers,
      onHeartbeat: (activation) => events.push('heartbeat until ' + activation.expiresAt),
      onSeatLost: (error) => events.push('lost ' + error.code + ' ' + (error instanceof KeyturnApiError)),
      onSeatRegained: (activation) => events.push('regained ' + activation.fingerprint),
      onError: (error) => events.push('error ' + (error.code ?? error.name)),
    })
    return { holdsSeat: seat.holdsSeat, delays: pending.map((timer) => timer.ms) }
  },
  async fire() {
    const [timer] = pending.splice(0, 1)
    const scheduled = new Promise((resolve) => { onScheduled = resolve })
    timer.callback()
    await scheduled
    return { holdsSeat: seat.holdsSeat, delays: pending.map((timer) => timer.ms) }
  },
  async stop() {
    await seat.stop()
    return { holdsSeat: seat.holdsSeat, delays: pending.map((timer) => timer.ms) }
  },
}
`

/** The token with one custom field changed and the signature kept: what a user editing it would make. */
function tamper(token: string): string {
  const [header, payload, signature] = token.split('.')
  const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'))
  claims.customFields = { ...claims.customFields, plan: 'enterprise' }
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.')
}

describe('offline validation in a browser', () => {
  it('refuses to bundle a node: import for the browser', async () => {
    const probe = build({
      ...browserBundleOptions,
      stdin: { contents: "import { randomBytes } from 'node:crypto'\nexport const x = randomBytes(1)" },
    })

    await assert.rejects(probe, /node:crypto/)
  })

  it('validates a server-issued token in Chromium with the PEM and the JWK, and rejects a tampered one as invalid_signature', {
    skip: skipWithoutChromium,
    timeout: 60_000,
  }, async (t) => {
    const bundle = await bundleClientForBrowser() // fails if the client pulls in a Node built-in
    const test = await buildTestApp(t, sqliteTestDatabase())
    const { app, headers, productId } = test
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId, expirationDate: '2031-01-01T00:00:00.000Z' },
    })
    assert.equal(created.statusCode, 201, created.body)
    const issued = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${created.json().id}/tokens`,
      headers,
      payload: { customPayload: { plan: 'pro', seats: 5 } },
    })
    assert.equal(issued.statusCode, 201, issued.body)
    const product = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.equal(product.statusCode, 200, product.body)
    const { token, payload } = issued.json()
    const { publicKey, publicKeyJwk } = product.json()

    const origin = await serveHttp(t, (request, response) => {
      if (request.url === '/') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page)
      } else if (request.url === '/keyturn-client.js') {
        response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle)
      } else {
        response.writeHead(404).end()
      }
    })
    const browser = await launchChromium(t)
    const tab = await browser.newPage()
    await tab.goto(`${origin}/`)

    // Runs in the page: no named inner functions, which tsx's keepNames would wrap in a helper
    // the page does not have.
    const outcome = await tab.evaluate(
      async (input) => {
        const client: typeof import('@keyturn/client') = await import(input.bundleUrl)
        const now = new Date(input.now)
        const common = { productId: input.productId, now }
        const withPem = await client.validateLicenseToken({
          ...common,
          publicKey: input.pem,
          token: input.token,
        })
        const withJwk = await client.validateLicenseToken({
          ...common,
          publicKey: input.jwk,
          token: input.token,
        })
        let refusal: { isLicenseTokenError: boolean; code: string } | undefined
        try {
          await client.validateLicenseToken({ ...common, publicKey: input.pem, token: input.tampered })
        } catch (error) {
          refusal = {
            isLicenseTokenError: error instanceof client.LicenseTokenError,
            code: (error as { code: string }).code, // a LicenseTokenError, as the line above checks
          }
        }
        const inBrowser = 'document' in globalThis && !('process' in globalThis)
        return { withPem, withJwk, refusal, inBrowser }
      },
      {
        bundleUrl: `${origin}/keyturn-client.js`,
        productId,
        pem: publicKey,
        jwk: publicKeyJwk,
        token,
        tampered: tamper(token),
        now: test.clock.now().toISOString(),
      },
    )

    assert.equal(outcome.inBrowser, true, 'the validation ran in a page, not in Node')
    const expected = {
      licenseId: payload.licenseId,
      expiresAt: payload.expirationDate,
      productId: payload.productId,
      customFields: payload.customFields,
      issuedAt: payload.createdAt,
      entitlements: [],
    }
    assert.deepEqual(expected.customFields, { plan: 'pro', seats: 5 })
    assert.deepEqual(outcome.withPem, expected)
    assert.deepEqual(outcome.withJwk, expected)
    assert.deepEqual(outcome.refusal, { isLicenseTokenError: true, code: 'invalid_signature' })
  })
})

describe('floating seats from a browser', () => {
  it('keeps a seat with startHeartbeats in Chromium, through CORS with a client key, loses it after the lease and takes it back, and frees it on stop', {
    skip: skipWithoutChromium,
    timeout: 60_000,
  }, async (t) => {
    const bundle = await bundleClientForBrowser()
    const origin = await serveHttp(t, (request, response) => {
      const files: Record<string, string> = {
        '/': page,
        '/keyturn-client.js': bundle,
        '/journey.js': heartbeatJourney,
      }
      const file = files[request.url ?? '']
      const type = request.url === '/' ? 'text/html' : 'text/javascript'
      response.writeHead(file === undefined ? 404 : 200, { 'content-type': `${type}; charset=utf-8` })
      response.end(file)
    })
    const server = await startTestServer(t, sqliteTestDatabase(), { corsOrigins: [origin] })
    const { app, headers, productId } = server
    const clientKey = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'web app', role: 'client', productId },
    })
    const license = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId, maxActivations: 1, heartbeatTtl: 60 },
    })
    assert.equal(license.statusCode, 201, license.body)
    const licenseId = license.json().id
    const seats = async () =>
      (await app.inject({ method: 'GET', url: `/api/v0/licenses/${licenseId}`, headers })).json()
        .activationCount
    const browser = await launchChromium(t)
    const tab = await browser.newPage()
    await tab.goto(`${origin}/`)
    await tab.addScriptTag({ url: `${origin}/journey.js`, type: 'module' })
    await tab.waitForFunction('window.journey !== undefined')
    const journey = (step: string, input?: unknown) =>
      tab.evaluate(`window.journey.${step}(${JSON.stringify(input ?? {})})`) as Promise<{
        holdsSeat: boolean
        delays: number[]
      }>

    const started = await journey('start', {
      baseUrl: server.baseUrl,
      apiKey: clientKey.json().secret,
      key: license.json().key,
      productId,
    })
    assert.deepEqual(
      started,
      { holdsSeat: true, delays: [30_000] },
      'the first heartbeat is due at half the TTL',
    )
    assert.equal(await seats(), 1)

    server.clock.advance(30_000)
    assert.deepEqual(await journey('fire'), { holdsSeat: true, delays: [30_000] })

    // The tab sleeps past its lease: the server's clock moves on, the next heartbeat finds no seat.
    server.clock.advance(91_000)
    const afterLapse = await journey('fire')
    assert.equal(afterLapse.holdsSeat, false)
    assert.deepEqual(
      await journey('fire'),
      { holdsSeat: true, delays: [30_000] },
      'the seat was free: taken back',
    )
    assert.deepEqual(await journey('stop'), { holdsSeat: false, delays: [] })
    assert.equal(await seats(), 0, 'stop() deactivated the tab, freeing its seat')
    assert.deepEqual(await tab.evaluate('window.journey.events'), [
      'heartbeat until 2030-01-01T00:01:30.000Z',
      'lost activation_not_found true',
      'regained browser-tab',
    ])
  })
})
