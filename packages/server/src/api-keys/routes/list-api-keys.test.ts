import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

const names = (body: { data: { name: string }[] }) => body.data.map((apiKey) => apiKey.name)

describeEachDatabase('GET /api/v0/api-keys', (database) => {
  it('lists keys newest first in the paginated envelope, never with a secret', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database) // the admin key: KEYTURN_ADMIN_KEY
    const secrets: string[] = []
    for (const name of ['First', 'Second']) {
      clock.advance(1000)
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/api-keys',
        headers,
        payload: { name, role: 'product', productId },
      })
      secrets.push(res.json().secret)
    }

    const res = await app.inject({ method: 'GET', url: '/api/v0/api-keys', headers })

    assert.equal(res.statusCode, 200, res.body)
    const { data, ...envelope } = res.json()
    assert.deepEqual(names(res.json()), ['Second', 'First', 'KEYTURN_ADMIN_KEY'])
    assert.deepEqual(envelope, {
      totalCount: 3,
      page: 0,
      limit: 30,
      totalPages: 1,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    })
    for (const apiKey of data) {
      assert.deepEqual(Object.keys(apiKey).sort(), [
        'createdAt',
        'id',
        'name',
        'object',
        'prefix',
        'productId',
        'role',
      ])
    }
    for (const secret of secrets) {
      assert.ok(!res.body.includes(secret.slice(12)), 'a secret is listed')
    }
  })

  it('pages, sorts by name ignoring letter case, and filters by role and productId', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    for (const [name, payload] of [
      ['b', { role: 'product', productId }],
      ['a', { role: 'product', productId: other }],
      ['c', { role: 'admin' }],
    ] as const) {
      await app.inject({ method: 'POST', url: '/api/v0/api-keys', headers, payload: { name, ...payload } })
    }

    const page = await app.inject({
      method: 'GET',
      url: '/api/v0/api-keys?sort=name:asc&limit=2&page=1',
      headers,
    })
    const products = await app.inject({
      method: 'GET',
      url: '/api/v0/api-keys?filter=role:eq:product&sort=name:asc',
      headers,
    })
    const scoped = await app.inject({
      method: 'GET',
      url: `/api/v0/api-keys?filter=productId:eq:${other}`,
      headers,
    })

    assert.equal(page.statusCode, 200, page.body)
    assert.deepEqual(
      [names(page.json()), page.json().totalCount, page.json().totalPages],
      [['c', 'KEYTURN_ADMIN_KEY'], 4, 2],
    )
    assert.deepEqual(names(products.json()), ['a', 'b'])
    assert.deepEqual(names(scoped.json()), ['a'])
  })

  it('answers 400 invalid_filter for a filter on a field it does not know', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/api/v0/api-keys?filter=digest:eq:00', headers })

    assertProblem(res, 400, 'invalid_filter')
  })

  it('answers 403 forbidden to a product key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)

    const res = await app.inject({ method: 'GET', url: '/api/v0/api-keys', headers: productKey })

    assertProblem(res, 403, 'forbidden')
  })
})
