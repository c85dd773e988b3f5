import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase('GET /api/v0/products/:id', (database) => {
  it('returns the product as it was created', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers,
      payload: { name: 'Acme' },
    })
    assert.equal(created.statusCode, 201, created.body)

    const res = await app.inject({ method: 'GET', url: `/api/v0/products/${created.json().id}`, headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), created.json())
  })

  it('returns a product to its own product key, with the same public key the admin sees', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)

    const asProduct = await app.inject({
      method: 'GET',
      url: `/api/v0/products/${productId}`,
      headers: productKey,
    })
    const asAdmin = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })

    assert.equal(asProduct.statusCode, 200, asProduct.body)
    assert.deepEqual(asProduct.json(), asAdmin.json())
  })

  it('answers 404 product_not_found for an unknown id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'GET',
      url: '/api/v0/products/prd_doesNotExist000000000',
      headers,
    })

    assertProblem(res, 404, 'product_not_found')
  })

  it('answers 404 product_not_found to a product key for another product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const productKey = await productKeyHeaders(app, headers, productId)

    const res = await app.inject({ method: 'GET', url: `/api/v0/products/${other}`, headers: productKey })

    assertProblem(res, 404, 'product_not_found')
  })

  it('answers 400 validation_failed at #/id for a malformed id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const id of ['lic_abc', 'abc', `prd_${'x'.repeat(61)}`]) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/products/${id}`, headers })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        ['#/id'],
        id,
      )
    }
  })

  it('is served under /v0 as well', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: `/v0/products/${productId}`, headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().id, productId)
  })
})
