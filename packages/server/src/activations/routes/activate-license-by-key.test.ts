import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense } from '../../testing/licenses.js'

describeEachDatabase('POST /api/v0/licenses/activate and /api/v0/licenses/deactivate', (database) => {
  it('activates and deactivates by key, freeing the seat', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await createLicense(app, headers, { productId, maxActivations: 1 })
    const byKey = (path: string, fingerprint: string) =>
      app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${path}`,
        headers,
        payload: { key: license.key, productId, fingerprint },
      })

    const first = await byKey('activate', 'a')
    const full = await byKey('activate', 'b')
    const off = await byKey('deactivate', 'a')
    const again = await byKey('deactivate', 'a')
    const now = await byKey('activate', 'b')

    assert.equal(first.statusCode, 201, first.body)
    assert.equal(full.statusCode, 409, full.body)
    assert.equal(off.statusCode, 204, off.body)
    assert.equal(again.statusCode, 404, again.body)
    assert.equal(again.json().code, 'activation_not_found')
    assert.equal(now.statusCode, 201, now.body)
  })

  it('answers 404 license_not_found for an unknown key or a key of another product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await createLicense(app, headers, { productId })
    const other = await createProduct(app, headers)

    const unknown = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/activate',
      headers,
      payload: { key: 'AAAAA-AAAAA-AAAAA-AAAAA-AAAAA', productId, fingerprint: 'a' },
    })
    const wrongProduct = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/activate',
      headers,
      payload: { key: license.key, productId: other, fingerprint: 'a' },
    })

    assert.equal(unknown.statusCode, 404, unknown.body)
    assert.equal(unknown.json().code, 'license_not_found')
    assert.equal(wrongProduct.statusCode, 404, wrongProduct.body)
  })
})
