import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'

// Its refusals (unknown or malformed id, a product key) are tested with the other status action's
// in product-status-actions.test.ts.
describeEachDatabase('POST /api/v0/products/:id/resume', (database) => {
  it('resumes a suspended product and moves updatedAt', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const before = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })
    clock.advance(60_000)

    const res = await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/resume`, headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), {
      ...before.json(),
      status: 'active',
      updatedAt: '2030-01-01T00:01:00.000Z',
    })
  })

  it('is idempotent: resuming an active product changes nothing', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const before = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    clock.advance(60_000)

    const first = await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/resume`, headers })
    const second = await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/resume`, headers })

    assert.equal(first.statusCode, 200, first.body)
    assert.deepEqual(first.json(), before.json())
    assert.deepEqual(second.json(), before.json())
  })

  it("makes the product's licenses valid again", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId },
    })
    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })

    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/resume`, headers })

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers,
      payload: { key: license.json().key, productId },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([res.json().isValid, res.json().reason], [true, null])
  })
})
