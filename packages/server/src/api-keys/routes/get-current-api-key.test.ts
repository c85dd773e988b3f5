import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, productKeyHeaders, testAdminSecret } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase('GET /api/v0/api-keys/current', (database) => {
  it('answers the key making the request, admin or product, without its secret', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)
    const list = await app.inject({ method: 'GET', url: '/api/v0/api-keys?limit=100', headers })
    const byRole = (role: string) => list.json().data.find((key: { role: string }) => key.role === role)

    const admin = await app.inject({ method: 'GET', url: '/api/v0/api-keys/current', headers })
    const product = await app.inject({ method: 'GET', url: '/v0/api-keys/current', headers: productKey })

    assert.equal(admin.statusCode, 200, admin.body)
    assert.deepEqual(admin.json(), byRole('admin'))
    assert.ok(testAdminSecret.startsWith(admin.json().prefix))
    assert.equal(product.statusCode, 200, product.body)
    assert.deepEqual(product.json(), byRole('product'))
    assert.equal(product.json().productId, productId)
    assert.ok(!product.body.includes(productKey.authorization.slice('Bearer kt_prod_'.length + 4)))
  })

  it('answers 403 forbidden to a client key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'App', role: 'client', productId },
    })

    const res = await app.inject({
      method: 'GET',
      url: '/api/v0/api-keys/current',
      headers: { authorization: `Bearer ${created.json().secret}` },
    })

    assertProblem(res, 403, 'forbidden')
  })
})
