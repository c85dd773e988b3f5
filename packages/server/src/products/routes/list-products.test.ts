import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

const names = (body: { data: { name: string }[] }) => body.data.map((product) => product.name)

describeEachDatabase('GET /api/v0/products', (database) => {
  it('answers the paginated envelope, newest first by default', async (t) => {
    const { app, headers, clock } = await buildTestApp(t, database) // creates "Test Product"
    for (const name of ['B', 'C', 'D', 'E']) {
      clock.advance(1000)
      await createProduct(app, headers, name)
    }

    const first = await app.inject({ method: 'GET', url: '/api/v0/products', headers })
    const middle = await app.inject({ method: 'GET', url: '/api/v0/products?limit=2&page=1', headers })
    const past = await app.inject({ method: 'GET', url: '/api/v0/products?limit=2&page=7', headers })

    assert.equal(first.statusCode, 200, first.body)
    const { data, ...envelope } = first.json()
    assert.deepEqual(envelope, {
      totalCount: 5,
      page: 0,
      limit: 30,
      totalPages: 1,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    })
    assert.deepEqual(names(first.json()), ['E', 'D', 'C', 'B', 'Test Product'])
    assert.equal(data[0].object, 'Product')
    assert.deepEqual(
      { ...middle.json<object>(), data: names(middle.json()) },
      {
        data: ['C', 'B'],
        totalCount: 5,
        page: 1,
        limit: 2,
        totalPages: 3,
        hasPrevPage: true,
        hasNextPage: true,
        prevPage: 0,
        nextPage: 2,
      },
    )
    assert.deepEqual([past.json().data, past.json().totalCount, past.json().hasNextPage], [[], 5, false])
  })

  it('returns the same resources as GET /products/:id', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const list = await app.inject({ method: 'GET', url: '/api/v0/products', headers })
    const one = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })

    assert.deepEqual(list.json().data, [one.json()])
  })

  it('sorts by name, ignoring letter case, in either order', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    for (const name of ['beta', 'Alpha', 'Gamma', 'delta']) {
      await createProduct(app, headers, name)
    }

    const asc = await app.inject({ method: 'GET', url: '/api/v0/products?sort=name:asc', headers })
    const desc = await app.inject({ method: 'GET', url: '/api/v0/products?sort=name:desc', headers })

    assert.equal(asc.statusCode, 200, asc.body)
    assert.deepEqual(names(asc.json()), ['Alpha', 'beta', 'delta', 'Gamma', 'Test Product'])
    assert.deepEqual(names(desc.json()), ['Test Product', 'Gamma', 'delta', 'beta', 'Alpha'])
  })

  it('sorts names beyond ASCII in the same order on both engines, paging included', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    for (const name of ['éclair', 'Zebra', 'Éclair', 'apple', 'a b', 'a-c', 'ab', 'İstanbul', 'ß', 'Ärger']) {
      await createProduct(app, headers, name)
    }
    // ASCII letters fold, the rest compares by code point: what SQLite's lower() and byte order give.
    const expected = [
      'a b',
      'a-c',
      'ab',
      'apple',
      'Test Product',
      'Zebra',
      'Ärger',
      'Éclair',
      'ß',
      'éclair',
      'İstanbul',
    ]

    const asc = await app.inject({ method: 'GET', url: '/api/v0/products?sort=name:asc&limit=100', headers })
    const desc = await app.inject({
      method: 'GET',
      url: '/api/v0/products?sort=name:desc&limit=100',
      headers,
    })
    const paged: string[] = []
    for (let after = ''; paged.length < expected.length; ) {
      const page = await app.inject({
        method: 'GET',
        url: `/api/v0/products?sort=name:asc&limit=4${after}`,
        headers,
      })
      const data = page.json().data as { id: string; name: string }[]
      paged.push(...data.map((product) => product.name))
      after = `&starting_after=${data.at(-1)?.id}`
    }

    assert.deepEqual(names(asc.json()), expected)
    assert.deepEqual(names(desc.json()), [...expected].reverse())
    assert.deepEqual(paged, expected)
  })

  it('pages through a name sort with starting_after without gaps or repeats', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    for (const name of ['beta', 'Alpha', 'alpha', 'Gamma']) {
      await createProduct(app, headers, name)
    }

    const seen: string[] = []
    let after: string | undefined
    for (let i = 0; i < 5; i++) {
      const cursor = after === undefined ? '' : `&starting_after=${after}`
      const res = await app.inject({
        method: 'GET',
        url: `/api/v0/products?sort=name:asc&limit=2${cursor}`,
        headers,
      })
      assert.equal(res.statusCode, 200, res.body)
      seen.push(...names(res.json()))
      after = res.json().data.at(-1)?.id
      if (!res.json().hasNextPage) {
        break
      }
    }

    assert.equal(seen.length, 5)
    assert.deepEqual(seen.slice(2), ['beta', 'Gamma', 'Test Product'])
    assert.deepEqual(seen.slice(0, 2).sort(), ['Alpha', 'alpha'])
  })

  it('filters by status', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers, 'Other')
    await app.inject({ method: 'POST', url: `/api/v0/products/${other}/suspend`, headers })

    const suspended = await app.inject({
      method: 'GET',
      url: '/api/v0/products?filter=status:eq:suspended',
      headers,
    })
    const active = await app.inject({
      method: 'GET',
      url: '/api/v0/products?filter=status:ne:suspended',
      headers,
    })
    const both = await app.inject({
      method: 'GET',
      url: '/api/v0/products?filter=status:in:active|suspended',
      headers,
    })

    assert.equal(suspended.statusCode, 200, suspended.body)
    assert.deepEqual(
      suspended.json().data.map((product: { id: string; status: string }) => [product.id, product.status]),
      [[other, 'suspended']],
    )
    assert.equal(suspended.json().totalCount, 1)
    assert.deepEqual(
      active.json().data.map((product: { id: string }) => product.id),
      [productId],
    )
    assert.equal(both.json().totalCount, 2)
  })

  it('filters by name, exactly', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    await createProduct(app, headers, 'Acme Photo Editor')
    await createProduct(app, headers, 'Acme')

    const res = await app.inject({
      method: 'GET',
      url: `/api/v0/products?filter=${encodeURIComponent('name:eq:Acme Photo Editor')}`,
      headers,
    })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(names(res.json()), ['Acme Photo Editor'])
  })

  it('combines a status filter with a name sort and pagination', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    for (const name of ['b', 'a', 'c']) {
      const id = await createProduct(app, headers, name)
      await app.inject({ method: 'POST', url: `/api/v0/products/${id}/suspend`, headers })
    }

    const res = await app.inject({
      method: 'GET',
      url: '/api/v0/products?filter=status:eq:suspended&sort=name:asc&limit=2&page=1',
      headers,
    })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([names(res.json()), res.json().totalCount, res.json().totalPages], [['c'], 3, 2])
  })

  it('answers 400 invalid_filter for an unknown field, operator or status', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const filter of ['colour:eq:red', 'status:gt:active', 'status:eq:deleted', 'name']) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/products?filter=${filter}`, headers })

      assertProblem(res, 400, 'invalid_filter')
    }
  })

  it('answers 400 validation_failed for a sort, limit or page it does not accept', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const [query, pointer] of [
      ['sort=status:asc', '#/sort'],
      ['sort=name:up', '#/sort'],
      ['limit=0', '#/limit'],
      ['limit=101', '#/limit'],
      ['page=-1', '#/page'],
    ]) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/products?${query}`, headers })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        [pointer],
        query,
      )
    }
  })

  it('shows a product key only its own product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    await createProduct(app, headers, 'Other')
    const productKey = await productKeyHeaders(app, headers, productId)

    const res = await app.inject({ method: 'GET', url: '/api/v0/products', headers: productKey })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(
      res.json().data.map((product: { id: string }) => product.id),
      [productId],
    )
    assert.equal(res.json().totalCount, 1)
  })

  it('is served under /v0 as well', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/v0/products', headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().totalCount, 1)
  })
})
