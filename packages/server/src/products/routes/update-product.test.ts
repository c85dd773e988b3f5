import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase('PATCH /api/v0/products/:id', (database) => {
  it('renames a product and moves updatedAt, keeping everything else', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const before = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    clock.advance(60_000)

    const res = await app.inject({
      method: 'PATCH',
      url: `/api/v0/products/${productId}`,
      headers,
      payload: { name: 'Renamed' },
    })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { ...before.json(), name: 'Renamed', updatedAt: '2030-01-01T00:01:00.000Z' })
    const after = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.deepEqual(after.json(), res.json())
  })

  it('changes nothing, updatedAt included, for an empty body', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const before = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    clock.advance(60_000)

    const res = await app.inject({
      method: 'PATCH',
      url: `/api/v0/products/${productId}`,
      headers,
      payload: {},
    })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), before.json())
    assert.equal(res.json().updatedAt, testStart)
    const after = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.deepEqual(after.json(), before.json())
  })

  it('keeps a suspended product suspended when it is renamed', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })

    const res = await app.inject({
      method: 'PATCH',
      url: `/api/v0/products/${productId}`,
      headers,
      payload: { name: 'Renamed' },
    })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([res.json().name, res.json().status], ['Renamed', 'suspended'])
  })

  it('answers 400 validation_failed at #/name for an empty, blank or too long name, changing nothing', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const name of ['', '  ', '\t', 'x'.repeat(201), null, 7]) {
      const res = await app.inject({
        method: 'PATCH',
        url: `/api/v0/products/${productId}`,
        headers,
        payload: { name },
      })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        ['#/name'],
      )
    }
    const after = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.equal(after.json().name, 'Test Product')
  })

  it('answers 400 validation_failed for a field that cannot be changed here', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const payload of [{ status: 'suspended' }, { publicKey: 'mine' }, { keyId: 'x' }]) {
      const res = await app.inject({
        method: 'PATCH',
        url: `/api/v0/products/${productId}`,
        headers,
        payload,
      })

      assertProblem(res, 400, 'validation_failed')
    }
  })

  it('answers 404 product_not_found for an unknown id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'PATCH',
      url: '/api/v0/products/prd_doesNotExist000000000',
      headers,
      payload: { name: 'Renamed' },
    })

    assertProblem(res, 404, 'product_not_found')
  })

  it('answers 400 validation_failed at #/id for a malformed id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'PATCH',
      url: '/api/v0/products/key_abc',
      headers,
      payload: { name: 'Renamed' },
    })

    assert.deepEqual(
      assertProblem(res, 400, 'validation_failed').errors?.map((error) => error.pointer),
      ['#/id'],
    )
  })

  it('answers 403 forbidden when a product key renames its own product, 404 for another one', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const productKey = await productKeyHeaders(app, headers, productId)

    for (const [id, status, code] of [
      [productId, 403, 'forbidden'],
      [other, 404, 'product_not_found'],
    ] as const) {
      const res = await app.inject({
        method: 'PATCH',
        url: `/api/v0/products/${id}`,
        headers: productKey,
        payload: { name: 'Mine now' },
      })

      assertProblem(res, status, code)
    }
    const own = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.equal(own.json().name, 'Test Product')
  })
})
