import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem } from '../../testing/licenses.js'
import { call, roleHeaders } from '../../testing/vendors.js'

describeEachDatabase('/api/v0/customers', (database) => {
  it('creates, gets, updates (metadata key by key) and deletes a customer', async (t) => {
    const { app, headers, clock } = await buildTestApp(t, database)
    const created = await call(app, headers, 'POST', '/customers', 201, {
      email: 'Ada@Example.com',
      name: 'Ada',
      metadata: { stripeCustomerId: 'cus_1', tier: 2, vip: false, dropped: null },
    })
    assert.match(created.id, /^cus_[0-9A-Za-z]{22}$/)
    assert.deepEqual(created, {
      id: created.id,
      object: 'Customer',
      email: 'Ada@Example.com',
      name: 'Ada',
      metadata: { stripeCustomerId: 'cus_1', tier: 2, vip: false },
      mailOptOut: false,
      createdAt: testStart,
      updatedAt: testStart,
    })
    assert.deepEqual(await call(app, headers, 'GET', `/customers/${created.id}`, 200), created)

    clock.advance(1000)
    const updated = await call(app, headers, 'PATCH', `/customers/${created.id}`, 200, {
      name: null,
      metadata: { tier: 3, vip: null, note: 'renewed' },
    })
    assert.equal(updated.name, null)
    assert.deepEqual(updated.metadata, { stripeCustomerId: 'cus_1', tier: 3, note: 'renewed' })
    assert.equal(updated.updatedAt, '2030-01-01T00:00:01.000Z')
    assert.deepEqual(await call(app, headers, 'PATCH', `/customers/${created.id}`, 200, {}), updated)

    await call(app, headers, 'DELETE', `/customers/${created.id}`, 204)
    expectProblem(
      await app.inject({ method: 'GET', url: `/api/v0/customers/${created.id}`, headers }),
      404,
      'customer_not_found',
    )
    expectProblem(
      await app.inject({ method: 'DELETE', url: `/api/v0/customers/${created.id}`, headers }),
      404,
      'customer_not_found',
    )
  })

  it('answers 409 customer_email_taken for an email another customer has, in any case', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    await call(app, headers, 'POST', '/customers', 201, { email: 'ada@example.com' })
    const other = await call(app, headers, 'POST', '/customers', 201, { email: 'bob@example.com' })

    const again = await app.inject({
      method: 'POST',
      url: '/api/v0/customers',
      headers,
      payload: { email: 'ADA@example.COM' },
    })
    const renamed = await app.inject({
      method: 'PATCH',
      url: `/api/v0/customers/${other.id}`,
      headers,
      payload: { email: 'Ada@Example.com' },
    })

    expectProblem(again, 409, 'customer_email_taken')
    expectProblem(renamed, 409, 'customer_email_taken')
    assert.equal((await call(app, headers, 'GET', `/customers/${other.id}`, 200)).email, 'bob@example.com')
  })

  it('answers 400 validation_failed naming the field for bad emails, names and metadata', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const post = (payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: '/api/v0/customers', headers, payload })

    expectInvalidField(await post({}), '#/email')
    expectInvalidField(await post({ email: 'not an email' }), '#/email')
    expectInvalidField(await post({ email: `${'a'.repeat(250)}@example.com` }), '#/email')
    expectInvalidField(await post({ email: 'a@example.com', name: '' }), '#/name')
    expectInvalidField(await post({ email: 'a@example.com', admin: true }), '#/admin')
    expectInvalidField(
      await post({ email: 'a@example.com', metadata: { 'bad key': 1 } }),
      '#/metadata/bad key',
    )
    expectInvalidField(
      await post({ email: 'a@example.com', metadata: { nested: { a: 1 } } }),
      '#/metadata/nested',
    )
    expectInvalidField(
      await post({ email: 'a@example.com', metadata: { long: 'x'.repeat(501) } }),
      '#/metadata/long',
    )
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]))
    expectInvalidField(await post({ email: 'a@example.com', metadata: tooMany }), '#/metadata')
    // 20 keys of 480 characters: each within bounds, together over 8 KiB.
    const tooBig = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'x'.repeat(480)]))
    expectInvalidField(await post({ email: 'a@example.com', metadata: tooBig }), '#/metadata')
    const list = await call(app, headers, 'GET', '/customers', 200)
    assert.equal(list.totalCount, 0, 'nothing was written')
  })

  it('refuses to delete a customer who owns licenses (409 customer_has_licenses) until they are detached', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const customer = await call(app, headers, 'POST', '/customers', 201, { email: 'ada@example.com' })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, customerId: customer.id })
    assert.equal(license.customerId, customer.id)

    const refused = await app.inject({ method: 'DELETE', url: `/api/v0/customers/${customer.id}`, headers })
    expectProblem(refused, 409, 'customer_has_licenses')

    const detached = await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, { customerId: null })
    assert.equal(detached.customerId, null)
    await call(app, headers, 'DELETE', `/customers/${customer.id}`, 204)
  })

  it('lists customers with filters on email (case-insensitive) and createdAt, sorted by email or name', async (t) => {
    const { app, headers, clock } = await buildTestApp(t, database)
    const carol = await call(app, headers, 'POST', '/customers', 201, {
      email: 'carol@example.com',
      name: 'carol',
    })
    clock.advance(1000)
    const ada = await call(app, headers, 'POST', '/customers', 201, { email: 'Ada@example.com', name: 'Zed' })
    clock.advance(1000)
    const bob = await call(app, headers, 'POST', '/customers', 201, { email: 'bob@example.com' })
    const ids = (page: { data: { id: string }[] }) => page.data.map((customer) => customer.id)

    assert.deepEqual(ids(await call(app, headers, 'GET', '/customers', 200)), [bob.id, ada.id, carol.id])
    assert.deepEqual(ids(await call(app, headers, 'GET', '/customers?sort=email:asc', 200)), [
      ada.id,
      bob.id,
      carol.id,
    ])
    assert.deepEqual(ids(await call(app, headers, 'GET', '/customers?sort=name:asc', 200)), [
      bob.id,
      carol.id,
      ada.id,
    ])
    assert.deepEqual(
      ids(await call(app, headers, 'GET', '/customers?filter=email:eq:ADA@EXAMPLE.COM', 200)),
      [ada.id],
    )
    assert.deepEqual(
      ids(
        await call(
          app,
          headers,
          'GET',
          `/customers?filter=createdAt:gt:${testStart}&sort=createdAt:asc`,
          200,
        ),
      ),
      [ada.id, bob.id],
    )
    const page = await call(app, headers, 'GET', `/customers?limit=1&starting_after=${bob.id}`, 200)
    assert.deepEqual([ids(page), page.page, page.totalCount], [[ada.id], 1, 3])
    expectProblem(
      await app.inject({ method: 'GET', url: '/api/v0/customers?filter=name:eq:x', headers }),
      400,
      'invalid_filter',
    )
  })

  it('shows a product key only the customers owning a license of its product, and a client key none (403)', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const productKey = await roleHeaders(app, headers, 'product', productId)
    const clientKey = await roleHeaders(app, headers, 'client', productId)
    const mine = await call(app, productKey, 'POST', '/customers', 201, { email: 'mine@example.com' })
    const theirs = await call(app, headers, 'POST', '/customers', 201, { email: 'theirs@example.com' })
    await call(app, headers, 'POST', '/licenses', 201, { productId: other, customerId: theirs.id })

    expectProblem(
      await app.inject({ method: 'GET', url: `/api/v0/customers/${mine.id}`, headers: productKey }),
      404,
      'customer_not_found',
    )
    assert.equal((await call(app, productKey, 'GET', '/customers', 200)).totalCount, 0)

    await call(app, productKey, 'POST', '/licenses', 201, { productId, customerId: mine.id })
    assert.deepEqual(await call(app, productKey, 'GET', `/customers/${mine.id}`, 200), mine)
    const visible = await call(app, productKey, 'GET', '/customers', 200)
    assert.deepEqual(
      visible.data.map((customer: { id: string }) => customer.id),
      [mine.id],
    )
    for (const [method, url] of [
      ['GET', `/customers/${theirs.id}`],
      ['PATCH', `/customers/${theirs.id}`],
      ['DELETE', `/customers/${theirs.id}`],
    ] as const) {
      const res = await app.inject({
        method,
        url: `/api/v0${url}`,
        headers: productKey,
        ...(method === 'PATCH' ? { payload: { name: 'x' } } : {}),
      })
      expectProblem(res, 404, 'customer_not_found')
    }
    for (const [method, url] of [
      ['GET', '/customers'],
      ['POST', '/customers'],
      ['GET', `/customers/${mine.id}`],
      ['PATCH', `/customers/${mine.id}`],
      ['DELETE', `/customers/${mine.id}`],
    ] as const) {
      const payload =
        method === 'POST' ? { email: 'c@example.com' } : method === 'PATCH' ? { name: 'x' } : undefined
      const res = await app.inject({
        method,
        url: `/api/v0${url}`,
        headers: clientKey,
        ...(payload === undefined ? {} : { payload }),
      })
      expectProblem(res, 403, 'forbidden')
    }
  })

  it('answers 404 customer_not_found for a license naming a customer that does not exist', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId })

    const create = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId, customerId: 'cus_doesNotExist' },
    })
    const patch = await app.inject({
      method: 'PATCH',
      url: `/api/v0/licenses/${license.id}`,
      headers,
      payload: { customerId: 'cus_doesNotExist' },
    })

    expectProblem(create, 404, 'customer_not_found')
    expectProblem(patch, 404, 'customer_not_found')
    assert.equal((await call(app, headers, 'GET', '/licenses', 200)).totalCount, 1)
  })
})
