import assert from 'node:assert/strict'
import { it } from 'node:test'
import {
  apiPrefixes,
  apiRoutes,
  catalogueAppOptions,
  operatorRoutes,
  requestFor,
  seedRouteFixture,
} from '../testing/api-routes.js'
import { buildTestApp, productKeyHeaders, suiteTestApp, testAdminSecret } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { assertProblem } from '../testing/problems.js'
import { itRejectsUnauthenticated, unauthenticatedScene } from '../testing/unauthenticated.js'

describeEachDatabase('authentication', (database) => {
  // One app for the tests that only read, or add a key nobody else counts, and for every route's
  // 401 cases: a fresh app each made this the slowest file. The route listing needs an app not yet
  // ready, the key deletion counts the product keys: those build their own.
  const shared = suiteTestApp(database)

  it('lists every API route the app serves, under both prefixes, in the shared catalogue', async (t) => {
    const { app } = await buildTestApp(t, database)
    const served: string[] = []
    app.addHook('onRoute', (route) => {
      const methods = [route.method].flat().filter((method) => method !== 'HEAD')
      for (const method of methods) {
        served.push(
          `${method} ${route.url}${route.config?.confirmsApiKey === true ? ' (confirms its key)' : ''}`,
        )
      }
    })
    await app.ready()

    // Registered once, under /api/v0; /v0 is rewritten to it before routing (app.ts).
    // The payment providers' receivers take no API key (their signature is the proof): not in the catalogue.
    const api = served
      .filter((route) => / \/(api\/)?v0\//.test(route) && !route.endsWith('/integrations/:id/webhook'))
      .sort()
    const catalogue = [
      ...apiRoutes.map(
        (route) => `${route.method} /api/v0${route.path}${route.confirmsApiKey ? ' (confirms its key)' : ''}`,
      ),
      ...operatorRoutes.map((route) => `${route.method} /api/v0${route.path}`),
    ].sort()
    assert.deepEqual(api, catalogue)
    for (const prefix of apiPrefixes) {
      for (const route of [...apiRoutes, ...operatorRoutes]) {
        const path = route.path.replace(/:(\w+)/g, 'x$1')
        const res = await app.inject({ method: route.method, url: `${prefix}${path}` })
        assert.equal(res.statusCode, 401, `${route.method} ${prefix}${route.path} is served: ${res.body}`)
      }
    }
  })

  it('answers every catalogue request with a 2xx for the admin key, under both prefixes', async (t) => {
    const { app, headers, productId, services } = await buildTestApp(t, database, catalogueAppOptions)

    for (const prefix of apiPrefixes) {
      const fixture = await seedRouteFixture(app, headers, productId, services.deliveries)
      for (const route of apiRoutes) {
        const res = await app.inject({ ...requestFor(route, prefix, fixture), headers })

        assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${route.method} ${route.path}: ${res.body}`)
      }
    }
  })

  it('accepts the Bearer scheme in any letter case and with extra spaces', async () => {
    const { app } = await shared()

    for (const authorization of [
      `bearer ${testAdminSecret}`,
      `BEARER ${testAdminSecret}`,
      `Bearer   ${testAdminSecret}  `,
    ]) {
      const res = await app.inject({ method: 'GET', url: '/api/v0/products', headers: { authorization } })

      assert.equal(res.statusCode, 200, `${authorization}: ${res.body}`)
    }
  })

  it('accepts a product key as well as an admin key', async () => {
    const { app, headers, productId } = await shared()
    const productKey = await productKeyHeaders(app, headers, productId)

    const res = await app.inject({ method: 'GET', url: `/v0/products/${productId}`, headers: productKey })

    assert.equal(res.statusCode, 200, res.body)
  })

  it('never echoes the presented key in the problem', async () => {
    const { app } = await shared()
    const secret = 'kt_admin_ThisIsNotAKeyButLooksLikeOne0001'

    const res = await app.inject({
      method: 'GET',
      url: '/api/v0/licenses',
      headers: { authorization: `Bearer ${secret}` },
    })

    assertProblem(res, 401, 'unauthenticated')
    assert.ok(!res.body.includes(secret), res.body)
  })

  it('refuses an unauthenticated request before reading its body: 401, not 413 or 400', async () => {
    const { app } = await shared()

    for (const payload of ['x'.repeat(200 * 1024), '{"not json']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/products',
        headers: { 'content-type': 'application/json' },
        payload,
      })

      assertProblem(res, 401, 'unauthenticated')
    }
  })

  it('refuses a key at once after it is deleted', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)
    const before = await app.inject({ method: 'GET', url: '/api/v0/licenses', headers: productKey })
    assert.equal(before.statusCode, 200, before.body)
    const keys = await app.inject({ method: 'GET', url: '/api/v0/api-keys?filter=role:eq:product', headers })
    const [productKeyResource] = keys.json().data

    const deleted = await app.inject({
      method: 'DELETE',
      url: `/api/v0/api-keys/${productKeyResource.id}`,
      headers,
    })
    assert.equal(deleted.statusCode, 204, deleted.body)

    const after = await app.inject({ method: 'GET', url: '/api/v0/licenses', headers: productKey })
    assertProblem(after, 401, 'unauthenticated')
  })

  for (const url of ['/healthz', '/readyz', '/openapi.json', '/docs/json']) {
    it(`serves GET ${url} without an API key`, async () => {
      const { app } = await shared()

      const res = await app.inject({ method: 'GET', url })

      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.headers['www-authenticate'], undefined)
    })
  }

  const scene = unauthenticatedScene(shared)
  for (const prefix of apiPrefixes) {
    for (const route of apiRoutes) {
      itRejectsUnauthenticated(scene, route, prefix)
    }
  }
})
