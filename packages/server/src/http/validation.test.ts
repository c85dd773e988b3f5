import assert from 'node:assert/strict'
import { it } from 'node:test'
import { recordServedRoutes, seedRouteFixture } from '../testing/api-routes.js'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { assertProblem } from '../testing/problems.js'

const nul = 'a\u0000b'
const loneSurrogate = 'a\uD800b'

describeEachDatabase('values no database can store', (database) => {
  it('answers 400 validation_failed naming the field when any text holds U+0000 or an unpaired surrogate', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const fixture = await seedRouteFixture(app, headers, productId)
    const client = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'app', role: 'client', productId },
    })
    const clientHeaders = { authorization: `Bearer ${client.json().secret}` }
    const byKey = { key: fixture.licenseKey, productId }
    const cases = (text: string) => [
      { url: '/products', payload: { name: text }, pointer: '#/name' },
      { method: 'PATCH', url: `/products/${productId}`, payload: { name: text }, pointer: '#/name' },
      { url: '/api-keys', payload: { name: text, role: 'admin' }, pointer: '#/name' },
      { url: '/licenses', payload: { productId: `prd_${text}` }, pointer: '#/productId' },
      {
        url: `/licenses/${fixture.licenseId}/activations`,
        payload: { fingerprint: text },
        pointer: '#/fingerprint',
      },
      {
        url: `/licenses/${fixture.licenseId}/activations`,
        payload: { fingerprint: 'm', name: text, metadata: { os: text } },
        pointer: '#/name',
      },
      {
        url: `/licenses/${fixture.licenseId}/activations`,
        payload: { fingerprint: 'm', metadata: { nested: [{ [text]: 1 }] } },
        pointer: `#/metadata/nested/0/${text}`,
      },
      {
        url: '/licenses/validate',
        payload: { ...byKey, fingerprint: text },
        pointer: '#/fingerprint',
        as: clientHeaders,
      },
      {
        url: '/licenses/activate',
        payload: { ...byKey, fingerprint: text },
        pointer: '#/fingerprint',
        as: clientHeaders,
      },
      {
        url: `/licenses/${fixture.licenseId}/tokens`,
        payload: { customPayload: { plan: text } },
        pointer: '#/customPayload/plan',
      },
      // Percent-decoding as UTF-8 gives no unpaired surrogate: a query can only carry the NUL.
      ...(text === nul
        ? [
            { method: 'GET', url: '/licenses?filter=productId:eq:prd_%00', pointer: '#/filter' },
            { method: 'GET', url: '/products?sort=name%00:asc', pointer: '#/sort' },
          ]
        : []),
    ]
    for (const text of [nul, loneSurrogate]) {
      for (const { method = 'POST', url, payload, pointer, as = headers } of cases(text)) {
        const res = await app.inject({
          method: method as 'GET' | 'POST' | 'PATCH',
          url: `/api/v0${url}`,
          headers: as,
          ...(payload === undefined ? {} : { payload }),
        })

        const problem = assertProblem(res, 400, 'validation_failed')
        assert.ok(
          problem.errors?.some((error) => error.pointer === pointer),
          `${method} ${url} ${JSON.stringify(text)}: ${res.body}`,
        )
        assert.match(problem.detail, /U\+0000|unpaired surrogate/)
      }
    }
    // Nothing of the refused requests was stored.
    const product = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.equal(product.json().name, 'Test Product')
    const activations = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${fixture.licenseId}/activations`,
      headers,
    })
    assert.equal(activations.json().totalCount, 2, activations.body) // the fixture's two machines
  })

  it('answers 404 with the resource code when a path id holds U+0000', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const cases = [
      { url: '/licenses/lic_%00', code: 'license_not_found' },
      { url: '/licenses/lic_x%00/activations', code: 'license_not_found' },
      { url: '/activations/act_%00', code: 'activation_not_found' },
      { url: '/products/prd_%00', code: 'product_not_found' },
      { url: '/products/prd_%00/keys', code: 'product_not_found' },
      { url: '/api-keys/key_%00', code: 'api_key_not_found' },
      { url: '/customers/cus_%00', code: 'customer_not_found' },
      { url: '/policies/pol_%00', code: 'policy_not_found' },
      { url: '/entitlements/ent_%00', code: 'entitlement_not_found' },
    ] as const
    for (const { url, code } of cases) {
      const res = await app.inject({ method: 'GET', url: `/api/v0${url}`, headers })

      assertProblem(res, 404, code)
    }
    const deleted = await app.inject({ method: 'DELETE', url: '/v0/activations/act_%00', headers })
    assertProblem(deleted, 404, 'activation_not_found')
  })

  it('answers 400 validation_failed on every list route when page or limit is not a finite number written in decimal', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const served = recordServedRoutes(app)
    await app.ready()
    const fixture = await seedRouteFixture(app, headers, productId)
    const ids: Record<string, string> = {
      licenses: fixture.licenseId,
      products: fixture.productId,
      activations: fixture.activationId,
      'api-keys': fixture.apiKeyId,
      'webhook-endpoints': fixture.webhookEndpointId,
    }
    const lists = served.filter((route) => {
      const query = route.schema?.querystring as { properties?: Record<string, unknown> } | undefined
      return route.method === 'GET' && query?.properties?.page !== undefined
    })
    assert.ok(lists.length >= 10, `list routes: ${lists.map((route) => route.url).join(', ')}`)

    for (const route of lists) {
      const path = route.url.replace(
        /\/([^/]+)\/:id/g,
        (_, resource: string) => `/${resource}/${ids[resource]}`,
      )
      for (const query of [
        'page=Infinity',
        'page=1e309',
        'limit=Infinity',
        'limit=-Infinity',
        'limit=1e309',
      ]) {
        const res = await app.inject({ method: 'GET', url: `${path}?${query}`, headers })

        const problem = assertProblem(res, 400, 'validation_failed')
        assert.match(problem.detail, /must be a finite number/, `${path}?${query}`)
      }
      // Ajv coerces with JavaScript's Number: these were 16, 1, 5, 1000, 0 and 0.
      for (const query of ['limit=0x10', 'page=0b1', 'limit=%2B5', 'page=1e3', 'page=1e-400', 'page=%20']) {
        const res = await app.inject({ method: 'GET', url: `${path}?${query}`, headers })

        const problem = assertProblem(res, 400, 'validation_failed')
        assert.match(problem.detail, /written in decimal digits/, `${path}?${query}`)
      }
      const fine = await app.inject({ method: 'GET', url: `${path}?page=0&limit=100`, headers })
      assert.equal(fine.statusCode, 200, `${path}: ${fine.body}`)
    }
  })

  it('answers 400 validation_failed when a JSON number in a free-form object is not finite', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const fixture = await seedRouteFixture(app, headers, productId)

    const res = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${fixture.licenseId}/tokens`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"customPayload":{"seats":1e309}}',
    })

    const problem = assertProblem(res, 400, 'validation_failed')
    assert.deepEqual(problem.errors, [
      { pointer: '#/customPayload/seats', detail: 'customPayload/seats must be a finite number' },
    ])
  })
})
