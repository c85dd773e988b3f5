import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'

// Its refusals (unknown or malformed id, a product key) are tested with the other status action's
// in product-status-actions.test.ts.
describeEachDatabase('POST /api/v0/products/:id/suspend', (database) => {
  it('suspends an active product and moves updatedAt', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const before = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    clock.advance(60_000)

    const res = await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), {
      ...before.json(),
      status: 'suspended',
      updatedAt: '2030-01-01T00:01:00.000Z',
    })
  })

  it('is idempotent: suspending a suspended product changes nothing', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const first = await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })
    clock.advance(60_000)

    const second = await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })

    assert.equal(second.statusCode, 200, second.body)
    assert.deepEqual(second.json(), first.json())
  })

  it("makes the product's licenses validate as not valid, reason suspended", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId },
    })
    const validate = () =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers,
        payload: { key: license.json().key, productId },
      })
    assert.deepEqual([(await validate()).json().isValid, (await validate()).json().reason], [true, null])

    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })

    const res = await validate()
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(
      [res.json().isValid, res.json().reason, res.json().license.status],
      [false, 'suspended', 'active'],
    )
  })
})
