import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense } from '../../testing/licenses.js'

describeEachDatabase(
  'GET /api/v0/licenses/:id/activations, GET and DELETE /api/v0/activations/:id',
  (database) => {
    it('lists, retrieves and deletes activations, paginated like every list', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const license = await createLicense(app, headers, { productId, maxActivations: null })
      for (const fingerprint of ['a', 'b', 'c']) {
        test.clock.advance(1000)
        await app.inject({
          method: 'POST',
          url: `/api/v0/licenses/${license.id}/activations`,
          headers,
          payload: { fingerprint },
        })
      }

      const page = await app.inject({
        method: 'GET',
        url: `/api/v0/licenses/${license.id}/activations?limit=2&sort=fingerprint:asc`,
        headers,
      })
      assert.equal(page.statusCode, 200, page.body)
      const { data, ...envelope } = page.json()
      assert.deepEqual(
        data.map((activation: { fingerprint: string }) => activation.fingerprint),
        ['a', 'b'],
      )
      assert.deepEqual(envelope, {
        totalCount: 3,
        page: 0,
        limit: 2,
        totalPages: 2,
        hasPrevPage: false,
        hasNextPage: true,
        prevPage: null,
        nextPage: 1,
      })

      const id = data[0].id
      const got = await app.inject({ method: 'GET', url: `/api/v0/activations/${id}`, headers })
      assert.equal(got.statusCode, 200, got.body)
      assert.equal(got.json().fingerprint, 'a')
      const deleted = await app.inject({ method: 'DELETE', url: `/api/v0/activations/${id}`, headers })
      assert.equal(deleted.statusCode, 204, deleted.body)
      const gone = await app.inject({ method: 'GET', url: `/api/v0/activations/${id}`, headers })
      assert.equal(gone.statusCode, 404, gone.body)
      assert.equal(gone.json().code, 'activation_not_found')
      const deletedAgain = await app.inject({ method: 'DELETE', url: `/api/v0/activations/${id}`, headers })
      assert.equal(deletedAgain.statusCode, 404, deletedAgain.body)
    })

    it('hides another product’s activations from a product key', async (t) => {
      const { app, headers, productId } = await buildTestApp(t, database)
      const license = await createLicense(app, headers, { productId })
      const created = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/activations`,
        headers,
        payload: { fingerprint: 'a' },
      })
      const foreign = await productKeyHeaders(app, headers, await createProduct(app, headers))

      const list = await app.inject({
        method: 'GET',
        url: `/api/v0/licenses/${license.id}/activations`,
        headers: foreign,
      })
      const got = await app.inject({
        method: 'GET',
        url: `/api/v0/activations/${created.json().id}`,
        headers: foreign,
      })
      const deleted = await app.inject({
        method: 'DELETE',
        url: `/api/v0/activations/${created.json().id}`,
        headers: foreign,
      })

      assert.equal(list.statusCode, 404, list.body)
      assert.equal(got.statusCode, 404, got.body)
      assert.equal(deleted.statusCode, 404, deleted.body)
    })
  },
)
