import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

// What suspending and resuming a product refuse alike; what each does is in its own test file.
const actions = [
  { action: 'suspend', status: 'active' },
  { action: 'resume', status: 'suspended' },
] as const

describeEachDatabase('POST /api/v0/products/:id/suspend and /resume: refusals', (database) => {
  for (const { action, status } of actions) {
    it(`${action}: answers 404 product_not_found for an unknown id, 400 at #/id for a malformed one`, async (t) => {
      const { app, headers } = await buildTestApp(t, database)

      const unknown = await app.inject({
        method: 'POST',
        url: `/api/v0/products/prd_doesNotExist000000000/${action}`,
        headers,
      })
      const malformed = await app.inject({ method: 'POST', url: `/api/v0/products/nope/${action}`, headers })

      assertProblem(unknown, 404, 'product_not_found')
      assert.deepEqual(
        assertProblem(malformed, 400, 'validation_failed').errors?.map((error) => error.pointer),
        ['#/id'],
      )
    })

    it(`${action}: answers 403 forbidden to a product key for its own product, 404 for another one`, async (t) => {
      const { app, headers, productId } = await buildTestApp(t, database)
      const other = await createProduct(app, headers)
      if (status === 'suspended') {
        await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })
      }
      const productKey = await productKeyHeaders(app, headers, productId)

      for (const [id, answer, code] of [
        [productId, 403, 'forbidden'],
        [other, 404, 'product_not_found'],
      ] as const) {
        const res = await app.inject({
          method: 'POST',
          url: `/api/v0/products/${id}/${action}`,
          headers: productKey,
        })

        assertProblem(res, answer, code)
      }
      const own = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
      assert.equal(own.json().status, status, 'the product is as it was')
    })
  }
})
