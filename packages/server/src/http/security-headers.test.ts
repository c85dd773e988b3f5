import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../testing/build-test-app.js'
import { sqliteTestDatabase } from '../testing/each-database.js'

/** The API's security headers (security-headers.ts apiSecurityHeaders), by lower-case name. */
const apiHeaders = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
}

/** Helmet's headers that act only on a document: not on a JSON answer. */
const documentOnly = [
  'cross-origin-opener-policy',
  'origin-agent-cluster',
  'x-dns-prefetch-control',
  'x-download-options',
  'x-permitted-cross-domain-policies',
  'x-xss-protection',
]

it('gives every API answer, a success or a problem, the security headers of a JSON API and none of a page', async (t) => {
  const { app, headers, productId } = await buildTestApp(t, sqliteTestDatabase())
  const created = await app.inject({
    method: 'POST',
    url: '/v0/licenses',
    headers,
    payload: { productId, maxActivations: 1 },
  })
  const unauthenticated = await app.inject({ method: 'GET', url: '/api/v0/licenses' })
  const invalid = await app.inject({ method: 'POST', url: '/api/v0/licenses', headers, payload: {} })

  assert.deepEqual([created.statusCode, unauthenticated.statusCode, invalid.statusCode], [201, 401, 400])
  for (const res of [created, unauthenticated, invalid]) {
    for (const [name, value] of Object.entries(apiHeaders)) {
      assert.equal(res.headers[name], value, `${name} on a ${res.statusCode}`)
    }
    for (const name of documentOnly) {
      assert.equal(res.headers[name], undefined, `${name} on a ${res.statusCode}`)
    }
  }
})
