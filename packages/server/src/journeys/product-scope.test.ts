import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { ErrorCode } from '@keyturn/protocol'
import type { LightMyRequestResponse } from 'fastify'
import { type ApiRoute, apiPrefixes, apiRoutes, requestFor, seedRouteFixture } from '../testing/api-routes.js'
import { buildTestApp, createProduct, productKeyHeaders } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { assertProblem } from '../testing/problems.js'

type Outcome = number | readonly [status: number, code: ErrorCode]

const forbidden = [403, 'forbidden'] as const
const noLicense = [404, 'license_not_found'] as const
const noProduct = [404, 'product_not_found'] as const
const noActivation = [404, 'activation_not_found'] as const
const noCustomer = [404, 'customer_not_found'] as const
const noPolicy = [404, 'policy_not_found'] as const
const noEntitlement = [404, 'entitlement_not_found'] as const
const noEndpoint = [404, 'webhook_endpoint_not_found'] as const

/**
 * What a product key gets on each route (docs/decisions/0006-authentication-and-roles.md): on its own product,
 * what an admin gets, except the admin-only actions (403); on another product, that product's data
 * is invisible (404), creating a license for it is forbidden, and lists are empty (checked below).
 */
const scope: Record<string, { readonly own: Outcome; readonly foreign: Outcome }> = {
  'GET /licenses': { own: 200, foreign: 200 },
  'POST /licenses': { own: 201, foreign: forbidden },
  'POST /licenses/import': { own: forbidden, foreign: forbidden },
  'POST /licenses/validate': { own: 200, foreign: noLicense },
  'GET /licenses/:id': { own: 200, foreign: noLicense },
  'PATCH /licenses/:id': { own: 200, foreign: noLicense },
  'POST /licenses/:id/tokens': { own: 201, foreign: noLicense },
  'POST /licenses/tokens': { own: 201, foreign: noLicense },
  'POST /licenses/:id/license-file': { own: 201, foreign: noLicense },
  'POST /licenses/license-file': { own: 201, foreign: noLicense },
  'POST /activations/:id/license-file': { own: 201, foreign: noActivation },
  'POST /licenses/activate-offline': { own: 201, foreign: noLicense },
  'POST /activations/:id/deactivate-offline': { own: 204, foreign: noActivation },
  'POST /licenses/:id/revoke': { own: 200, foreign: noLicense },
  'POST /licenses/:id/reinstate': { own: 200, foreign: noLicense },
  'POST /licenses/:id/renew': { own: 200, foreign: noLicense },
  'POST /licenses/activate': { own: 201, foreign: noLicense },
  'POST /licenses/deactivate': { own: 204, foreign: noLicense },
  'POST /licenses/heartbeat': { own: 200, foreign: noLicense },
  'POST /licenses/usage': { own: 200, foreign: noLicense },
  'POST /licenses/:id/usage': { own: 200, foreign: noLicense },
  'POST /licenses/:id/usage/reset': { own: 200, foreign: noLicense },
  'POST /licenses/:id/activations': { own: 201, foreign: noLicense },
  'GET /licenses/:id/activations': { own: 200, foreign: noLicense },
  'GET /activations': { own: 200, foreign: 200 },
  'GET /activations/:id': { own: 200, foreign: noActivation },
  'POST /activations/:id/heartbeat': { own: 200, foreign: noActivation },
  'DELETE /activations/:id': { own: 204, foreign: noActivation },
  'GET /products': { own: 200, foreign: 200 },
  'POST /products': { own: forbidden, foreign: forbidden },
  'GET /products/:id': { own: 200, foreign: noProduct },
  'PATCH /products/:id': { own: forbidden, foreign: noProduct },
  'POST /products/:id/suspend': { own: forbidden, foreign: noProduct },
  'POST /products/:id/resume': { own: forbidden, foreign: noProduct },
  'GET /products/:id/keys': { own: 200, foreign: noProduct },
  'POST /products/:id/keys/rotate': { own: forbidden, foreign: noProduct },
  // Customers are global: a product key may create them, and sees those owning its licenses.
  'GET /customers': { own: 200, foreign: 200 },
  // Search answers 200 with an empty list for what the key may not see.
  'GET /search': { own: 200, foreign: 200 },
  'GET /stats': { own: 200, foreign: noProduct },
  'GET /stats/failures': { own: 200, foreign: noProduct },
  'POST /customers': { own: 201, foreign: 201 },
  'GET /customers/:id': { own: 200, foreign: noCustomer },
  'PATCH /customers/:id': { own: 200, foreign: noCustomer },
  // Deletable customers own no license, so no product key sees them.
  'DELETE /customers/:id': { own: noCustomer, foreign: noCustomer },
  // Admin keys only.
  'POST /customers/:id/portal-link': { own: forbidden, foreign: forbidden },
  'GET /customers/:id/portal-sessions': { own: forbidden, foreign: forbidden },
  'DELETE /customers/:id/portal-sessions/:sessionId': { own: forbidden, foreign: forbidden },
  'GET /policies': { own: 200, foreign: 200 },
  'POST /policies': { own: 201, foreign: forbidden },
  'GET /policies/:id': { own: 200, foreign: noPolicy },
  'PATCH /policies/:id': { own: 200, foreign: noPolicy },
  'DELETE /policies/:id': { own: 204, foreign: noPolicy },
  'GET /entitlements': { own: 200, foreign: 200 },
  'POST /entitlements': { own: 201, foreign: forbidden },
  'GET /entitlements/:id': { own: 200, foreign: noEntitlement },
  'PATCH /entitlements/:id': { own: 200, foreign: noEntitlement },
  'DELETE /entitlements/:id': { own: 204, foreign: noEntitlement },
  'GET /api-keys': { own: forbidden, foreign: forbidden },
  'POST /api-keys': { own: forbidden, foreign: forbidden },
  'GET /api-keys/current': { own: 200, foreign: 200 },
  'GET /api-keys/:id': { own: forbidden, foreign: forbidden },
  'DELETE /api-keys/:id': { own: forbidden, foreign: forbidden },
  'GET /events': { own: 200, foreign: 200 },
  'GET /emails': { own: forbidden, foreign: forbidden },
  'GET /events/:id': { own: 200, foreign: [404, 'event_not_found'] },
  'GET /webhook-endpoints': { own: 200, foreign: 200 },
  'POST /webhook-endpoints': { own: 201, foreign: forbidden },
  'GET /webhook-endpoints/:id': { own: 200, foreign: noEndpoint },
  'PATCH /webhook-endpoints/:id': { own: 200, foreign: noEndpoint },
  'POST /webhook-endpoints/:id/rotate-secret': { own: 200, foreign: noEndpoint },
  'POST /webhook-endpoints/:id/test': { own: 202, foreign: noEndpoint },
  'GET /webhook-endpoints/:id/deliveries': { own: 200, foreign: noEndpoint },
  'POST /webhook-deliveries/:id/retry': { own: 200, foreign: [404, 'webhook_delivery_not_found'] },
  'DELETE /webhook-endpoints/:id': { own: 204, foreign: noEndpoint },
  'GET /integrations': { own: forbidden, foreign: forbidden },
  'POST /integrations': { own: forbidden, foreign: forbidden },
  'GET /integrations/:id': { own: forbidden, foreign: forbidden },
  'PATCH /integrations/:id': { own: forbidden, foreign: forbidden },
  'GET /integrations/:id/events': { own: forbidden, foreign: forbidden },
  'GET /licenses/:id/provider-links': { own: forbidden, foreign: forbidden },
  'DELETE /integrations/:id': { own: forbidden, foreign: forbidden },
}

const routeKey = (route: ApiRoute) => `${route.method} ${route.path}`

function assertOutcome(res: LightMyRequestResponse, expected: Outcome, what: string): void {
  if (typeof expected === 'number') {
    assert.equal(res.statusCode, expected, `${what}: ${res.body}`)
  } else {
    assertProblem(res, ...expected)
  }
}

describeEachDatabase('a product key against every route', (database) => {
  it('has an expected outcome for every route in the catalogue', () => {
    assert.deepEqual(Object.keys(scope).sort(), apiRoutes.map(routeKey).sort())
  })

  for (const prefix of apiPrefixes) {
    it(`works on its own product and sees nothing of another one, under ${prefix}`, async (t) => {
      const { app, headers, productId, services } = await buildTestApp(t, database)
      const otherId = await createProduct(app, headers, 'Other Product')
      const own = await seedRouteFixture(app, headers, productId, services.deliveries)
      const foreign = await seedRouteFixture(app, headers, otherId, services.deliveries)
      const productKey = await productKeyHeaders(app, headers, productId)
      const before = {
        license: (
          await app.inject({ method: 'GET', url: `/api/v0/licenses/${foreign.licenseId}`, headers })
        ).json(),
        product: (await app.inject({ method: 'GET', url: `/api/v0/products/${otherId}`, headers })).json(),
      }

      for (const route of apiRoutes) {
        const expected = scope[routeKey(route)]
        assert.ok(expected, routeKey(route))
        await t.test(routeKey(route), async () => {
          const onForeign = await app.inject({ ...requestFor(route, prefix, foreign), headers: productKey })
          assertOutcome(onForeign, expected.foreign, `another product: ${routeKey(route)}`)

          const onOwn = await app.inject({ ...requestFor(route, prefix, own), headers: productKey })
          assertOutcome(onOwn, expected.own, `its own product: ${routeKey(route)}`)
        })
      }

      const after = {
        license: (
          await app.inject({ method: 'GET', url: `/api/v0/licenses/${foreign.licenseId}`, headers })
        ).json(),
        product: (await app.inject({ method: 'GET', url: `/api/v0/products/${otherId}`, headers })).json(),
      }
      assert.deepEqual(after, before, "the other product's data is unchanged")
      const activation = await app.inject({
        method: 'GET',
        url: `/api/v0/activations/${foreign.activationId}`,
        headers,
      })
      assert.equal(activation.statusCode, 200, activation.body)
      const apiKey = await app.inject({ method: 'GET', url: `/api/v0/api-keys/${foreign.apiKeyId}`, headers })
      assert.equal(apiKey.statusCode, 200, apiKey.body)
    })
  }

  it('lists only its own licenses, whatever productId or filter it asks for', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const otherId = await createProduct(app, headers, 'Other Product')
    const own = await seedRouteFixture(app, headers, productId)
    await seedRouteFixture(app, headers, otherId)
    const productKey = await productKeyHeaders(app, headers, productId)
    const list = async (query: string) => {
      const res = await app.inject({ method: 'GET', url: `/api/v0/licenses${query}`, headers: productKey })
      assert.equal(res.statusCode, 200, res.body)
      return [res.json().data.map((license: { id: string }) => license.id), res.json().totalCount]
    }

    assert.deepEqual(await list(''), [[own.licenseId], 1])
    assert.deepEqual(await list(`?productId=${productId}`), [[own.licenseId], 1])
    assert.deepEqual(await list(`?productId=${otherId}`), [[], 0])
    assert.deepEqual(await list(`?filter=productId:eq:${otherId}`), [[], 0])
    assert.deepEqual(await list(`?filter=productId:ne:${productId}`), [[], 0])
    assert.deepEqual(await list(`?filter=productId:in:${otherId}|${productId}`), [[own.licenseId], 1])
    const all = await app.inject({ method: 'GET', url: '/api/v0/licenses', headers })
    assert.equal(all.json().totalCount, 2, 'the admin key sees both')
  })

  it("answers another product's license as a starting_after cursor exactly as an unknown id", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const otherId = await createProduct(app, headers, 'Other Product')
    await seedRouteFixture(app, headers, productId)
    const foreign = await seedRouteFixture(app, headers, otherId)
    const productKey = await productKeyHeaders(app, headers, productId)

    const onForeign = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses?starting_after=${foreign.licenseId}`,
      headers: productKey,
    })
    const onUnknown = await app.inject({
      method: 'GET',
      url: '/api/v0/licenses?starting_after=lic_doesNotExist000000000',
      headers: productKey,
    })

    const problem = assertProblem(onForeign, 400, 'validation_failed')
    const unknown = assertProblem(onUnknown, 400, 'validation_failed')
    assert.deepEqual(
      problem.errors?.map((error) => error.pointer),
      unknown.errors?.map((error) => error.pointer),
    )
    assert.equal(
      problem.detail.replace(foreign.licenseId, 'ID'),
      unknown.detail.replace('lic_doesNotExist000000000', 'ID'),
    )
  })

  it("answers a validation of another product's key as not found, whichever product it names", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const otherId = await createProduct(app, headers, 'Other Product')
    const foreign = await seedRouteFixture(app, headers, otherId)
    const productKey = await productKeyHeaders(app, headers, productId)

    for (const named of [otherId, productId]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers: productKey,
        payload: { key: foreign.licenseKey, productId: named },
      })

      assertProblem(res, 404, 'license_not_found')
    }
  })

  it('lists only its own product, and none of its keys are another product’s', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    await createProduct(app, headers, 'Other Product')
    const productKey = await productKeyHeaders(app, headers, productId)

    const products = await app.inject({
      method: 'GET',
      url: '/api/v0/products?limit=100',
      headers: productKey,
    })
    const suspended = await app.inject({
      method: 'GET',
      url: '/api/v0/products?filter=status:eq:active&sort=name:desc',
      headers: productKey,
    })

    assert.equal(products.statusCode, 200, products.body)
    assert.deepEqual(
      products.json().data.map((product: { id: string }) => product.id),
      [productId],
    )
    assert.equal(products.json().totalCount, 1)
    assert.equal(suspended.json().totalCount, 1)
  })
})
