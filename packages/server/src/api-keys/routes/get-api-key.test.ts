import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase('GET /api/v0/api-keys/:id', (database) => {
  it('returns the key as created, without its secret', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Back end', role: 'product', productId },
    })
    const { secret, ...resource } = created.json()

    const res = await app.inject({ method: 'GET', url: `/api/v0/api-keys/${resource.id}`, headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), resource)
    assert.ok(!res.body.includes(secret.slice(resource.prefix.length)), res.body)
  })

  it('answers 404 api_key_not_found for an unknown id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'GET',
      url: '/api/v0/api-keys/key_doesNotExist000000000',
      headers,
    })

    assertProblem(res, 404, 'api_key_not_found')
  })

  it('answers 400 validation_failed at #/id for a malformed id', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: `/api/v0/api-keys/${productId}`, headers })

    assert.deepEqual(
      assertProblem(res, 400, 'validation_failed').errors?.map((error) => error.pointer),
      ['#/id'],
    )
  })

  it('answers 403 forbidden to a product key, even for its own id', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)
    const list = await app.inject({ method: 'GET', url: '/api/v0/api-keys?filter=role:eq:product', headers })
    const [own] = list.json().data

    const res = await app.inject({ method: 'GET', url: `/api/v0/api-keys/${own.id}`, headers: productKey })

    assertProblem(res, 403, 'forbidden')
  })
})
