import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, productKeyHeaders, testAdminSecret } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase('DELETE /api/v0/api-keys/:id', (database) => {
  it('deletes a key with 204 and no body; it is gone from get and list', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Temporary', role: 'admin' },
    })
    const { id } = created.json()

    const res = await app.inject({ method: 'DELETE', url: `/api/v0/api-keys/${id}`, headers })

    assert.equal(res.statusCode, 204, res.body)
    assert.equal(res.body, '')
    assertProblem(
      await app.inject({ method: 'GET', url: `/api/v0/api-keys/${id}`, headers }),
      404,
      'api_key_not_found',
    )
    const list = await app.inject({ method: 'GET', url: '/api/v0/api-keys', headers })
    assert.ok(!list.json().data.some((apiKey: { id: string }) => apiKey.id === id))
  })

  it('refuses the deleted key from the next request on, and only that key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const kept = await productKeyHeaders(app, headers, productId)
    const doomed = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Doomed', role: 'admin' },
    })
    const doomedHeaders = { authorization: `Bearer ${doomed.json().secret}` }
    assert.equal(
      (await app.inject({ method: 'GET', url: '/api/v0/products', headers: doomedHeaders })).statusCode,
      200,
    )

    await app.inject({ method: 'DELETE', url: `/api/v0/api-keys/${doomed.json().id}`, headers })

    const refused = await app.inject({ method: 'GET', url: '/api/v0/products', headers: doomedHeaders })
    assertProblem(refused, 401, 'unauthenticated')
    assert.equal((await app.inject({ method: 'GET', url: '/api/v0/products', headers })).statusCode, 200)
    assert.equal(
      (await app.inject({ method: 'GET', url: '/api/v0/licenses', headers: kept })).statusCode,
      200,
    )
  })

  it('answers 403 forbidden when an admin key deletes itself, and the key keeps working', async (t) => {
    const { app, headers, admin } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'DELETE', url: `/api/v0/api-keys/${admin.apiKeyId}`, headers })

    assertProblem(res, 403, 'forbidden')
    const still = await app.inject({ method: 'GET', url: '/api/v0/api-keys', headers })
    assert.equal(still.statusCode, 200, still.body)
  })

  it('lets another admin key delete the first one', async (t) => {
    const { app, headers, admin } = await buildTestApp(t, database)
    const second = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Second admin', role: 'admin' },
    })
    const secondHeaders = { authorization: `Bearer ${second.json().secret}` }

    const res = await app.inject({
      method: 'DELETE',
      url: `/api/v0/api-keys/${admin.apiKeyId}`,
      headers: secondHeaders,
    })

    assert.equal(res.statusCode, 204, res.body)
    const refused = await app.inject({
      method: 'GET',
      url: '/api/v0/products',
      headers: { authorization: `Bearer ${testAdminSecret}` },
    })
    assertProblem(refused, 401, 'unauthenticated')
  })

  it('answers 404 api_key_not_found for an unknown or already deleted key', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Once', role: 'admin' },
    })
    await app.inject({ method: 'DELETE', url: `/api/v0/api-keys/${created.json().id}`, headers })

    for (const id of ['key_doesNotExist000000000', created.json().id]) {
      const res = await app.inject({ method: 'DELETE', url: `/api/v0/api-keys/${id}`, headers })

      assertProblem(res, 404, 'api_key_not_found')
    }
  })

  it('answers 400 validation_failed at #/id for a malformed id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'DELETE', url: '/api/v0/api-keys/admin', headers })

    assertProblem(res, 400, 'validation_failed')
  })

  it('answers 403 forbidden to a product key, even for its own id or another product key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)
    await productKeyHeaders(app, headers, productId)
    const list = await app.inject({ method: 'GET', url: '/api/v0/api-keys?filter=role:eq:product', headers })

    for (const { id } of list.json().data) {
      const res = await app.inject({ method: 'DELETE', url: `/api/v0/api-keys/${id}`, headers: productKey })

      assertProblem(res, 403, 'forbidden')
    }
    const after = await app.inject({ method: 'GET', url: '/api/v0/api-keys?filter=role:eq:product', headers })
    assert.equal(after.json().totalCount, 2)
  })
})
