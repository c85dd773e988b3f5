import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { build } from 'esbuild'
import {
  browserBundleOptions,
  bundleClientForBrowser,
  launchChromium,
  skipWithoutChromium,
} from '../testing/browser.js'
import { buildTestApp } from '../testing/build-test-app.js'
import { sqliteTestDatabase } from '../testing/each-database.js'
import { serveHttp } from '../testing/listening-app.js'

const page = '<!doctype html><meta charset="utf-8"><title>Keyturn offline validation</title>'

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
