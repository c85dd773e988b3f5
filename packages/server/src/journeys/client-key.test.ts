import assert from 'node:assert/strict'
import { it } from 'node:test'
import { apiRoutes, requestFor, seedRouteFixture } from '../testing/api-routes.js'
import { buildTestApp, createProduct } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'

/** What an application with an embedded client key may do: everything by license key, nothing else. */
const allowed = new Set([
  'POST /licenses/validate',
  'POST /licenses/activate',
  'POST /licenses/deactivate',
  'POST /licenses/tokens',
  'POST /licenses/license-file',
  'POST /licenses/heartbeat',
  'POST /licenses/usage',
])

async function clientKeyHeaders(
  app: Awaited<ReturnType<typeof buildTestApp>>['app'],
  admin: { authorization: string },
  productId: string,
) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v0/api-keys',
    headers: admin,
    payload: { name: 'Photo Editor 3.2 (shipped)', role: 'client', productId },
  })
  assert.equal(res.statusCode, 201, res.body)
  assert.match(res.json().secret, /^kt_client_/)
  assert.equal(res.json().role, 'client')
  return { authorization: `Bearer ${res.json().secret}` }
}

describeEachDatabase('the client role', (database) => {
  it('may validate, activate, deactivate, heartbeat, count usage and obtain tokens by key, and answers 403 forbidden on every other route', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const client = await clientKeyHeaders(app, headers, productId)
    const fixture = await seedRouteFixture(app, headers, productId)

    for (const route of apiRoutes) {
      const name = `${route.method} ${route.path}`
      const res = await app.inject({ ...requestFor(route, '/api/v0', fixture), headers: client })
      if (allowed.has(name)) {
        assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${name}: ${res.body}`)
      } else {
        assert.equal(res.statusCode, 403, `${name}: ${res.body}`)
        assert.equal(res.json().code, 'forbidden', name)
      }
    }
  })

  it('sees only its own product’s licenses by key: another product’s key is 404 license_not_found', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const otherFixture = await seedRouteFixture(app, headers, other)
    const mine = await createProduct(app, headers, 'Mine')
    const client = await clientKeyHeaders(app, headers, mine)

    for (const path of ['validate', 'activate', 'tokens']) {
      const res = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${path}`,
        headers: client,
        payload: {
          key: otherFixture.licenseKey,
          productId: other,
          ...(path === 'activate' ? { fingerprint: 'a' } : {}),
        },
      })
      assert.equal(res.statusCode, 404, `${path}: ${res.body}`)
      assert.equal(res.json().code, 'license_not_found')
    }
  })

  it('needs a productId when created, like a product key', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'x', role: 'client' },
    })

    assert.equal(res.statusCode, 400, res.body)
    assert.equal(res.json().errors[0].pointer, '#/productId')
  })
})
