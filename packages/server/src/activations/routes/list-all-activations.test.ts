import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { ActivationResource, LicenseId } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { type AuthHeaders, createLicense } from '../../testing/licenses.js'
import { assertProblem } from '../../testing/problems.js'

async function activate(app: App, headers: AuthHeaders, licenseId: LicenseId, fingerprint: string) {
  const res = await app.inject({
    method: 'POST',
    url: `/api/v0/licenses/${licenseId}/activations`,
    headers,
    payload: { fingerprint },
  })
  assert.equal(res.statusCode, 201, res.body)
}

/** GET /api/v0/activations?<query> as `headers`: the fingerprints listed and the total count. */
async function listed(app: App, headers: AuthHeaders, query = '') {
  const res = await app.inject({ method: 'GET', url: `/api/v0/activations${query}`, headers })
  assert.equal(res.statusCode, 200, res.body)
  const page = res.json()
  return [page.data.map((activation: ActivationResource) => activation.fingerprint), page.totalCount]
}

describeEachDatabase('GET /api/v0/activations', (database) => {
  it("lists every license's activations newest first, paged, sorted and filtered by product and license", async (t) => {
    const test = await buildTestApp(t, database)
    const { app, headers, productId } = test
    const otherId = await createProduct(app, headers, 'Other Product')
    const first = await createLicense(app, headers, { productId, maxActivations: null })
    const second = await createLicense(app, headers, { productId, maxActivations: null })
    const foreign = await createLicense(app, headers, { productId: otherId })
    for (const [license, fingerprint] of [
      [first, 'a'],
      [second, 'b'],
      [first, 'c'],
      [foreign, 'd'],
    ] as const) {
      test.clock.advance(1000)
      await activate(app, headers, license.id, fingerprint)
    }

    assert.deepEqual(await listed(app, headers), [['d', 'c', 'b', 'a'], 4])
    assert.deepEqual(await listed(app, headers, '?limit=1'), [['d'], 4])
    assert.deepEqual(await listed(app, headers, '?sort=fingerprint:asc&limit=2&page=1'), [['c', 'd'], 4])
    assert.deepEqual(await listed(app, headers, `?productId=${productId}`), [['c', 'b', 'a'], 3])
    assert.deepEqual(await listed(app, headers, `?licenseId=${first.id}`), [['c', 'a'], 2])
    assert.deepEqual(await listed(app, headers, `?filter=licenseId:eq:${second.id}`), [['b'], 1])
    assert.deepEqual(await listed(app, headers, `?filter=productId:ne:${productId}`), [['d'], 1])
    assert.deepEqual(await listed(app, headers, `?productId=${otherId}&licenseId=${first.id}`), [[], 0])
    const [c] = (
      await app.inject({ method: 'GET', url: '/api/v0/activations?limit=1&page=1', headers })
    ).json().data
    assert.deepEqual(await listed(app, headers, `?starting_after=${c.id}&limit=1`), [['b'], 4])
    assert.equal(c.licenseId, first.id)
    assert.equal(c.productId, productId)
  })

  it("shows a product key only its product's activations, whatever productId or filter it asks for", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const otherId = await createProduct(app, headers, 'Other Product')
    const own = await createLicense(app, headers, { productId })
    const foreign = await createLicense(app, headers, { productId: otherId })
    await activate(app, headers, own.id, 'own-machine')
    await activate(app, headers, foreign.id, 'foreign-machine')
    const productKey = await productKeyHeaders(app, headers, productId)

    assert.deepEqual(await listed(app, productKey), [['own-machine'], 1])
    assert.deepEqual(await listed(app, productKey, `?productId=${otherId}`), [[], 0])
    assert.deepEqual(await listed(app, productKey, `?licenseId=${foreign.id}`), [[], 0])
    assert.deepEqual(await listed(app, productKey, `?filter=productId:eq:${otherId}`), [[], 0])
    assert.deepEqual(await listed(app, productKey, `?filter=licenseId:eq:${foreign.id}`), [[], 0])
    const [foreignActivation] = (
      await app.inject({ method: 'GET', url: `/api/v0/activations?productId=${otherId}`, headers })
    ).json().data
    assertProblem(
      await app.inject({
        method: 'GET',
        url: `/api/v0/activations?starting_after=${foreignActivation.id}`,
        headers: productKey,
      }),
      400,
      'validation_failed',
    )
  })

  it('does not list or count a floating seat whose lease lapsed', async (t) => {
    const test = await buildTestApp(t, database)
    const { app, headers, productId } = test
    const floating = await createLicense(app, headers, { productId, heartbeatTtl: 60 })
    const fixed = await createLicense(app, headers, { productId })
    await activate(app, headers, floating.id, 'leased')
    await activate(app, headers, fixed.id, 'fixed')
    assert.deepEqual(await listed(app, headers, '?sort=fingerprint:asc'), [['fixed', 'leased'], 2])

    test.clock.advance(61_000)
    assert.deepEqual(await listed(app, headers), [['fixed'], 1])
    assert.deepEqual(await listed(app, headers, `?licenseId=${floating.id}`), [[], 0])
  })

  it('refuses a filter or sort field it does not have', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    for (const query of ['filter=status:eq:active', 'sort=licenseId:asc', 'licenseId=nope']) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/activations?${query}`, headers })
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`)
    }
  })
})
