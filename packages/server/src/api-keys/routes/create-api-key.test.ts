import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase('POST /api/v0/api-keys', (database) => {
  it('creates an admin key and shows its secret, which works at once', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Ops', role: 'admin' },
    })

    assert.equal(res.statusCode, 201, res.body)
    const { id, secret, ...rest } = res.json()
    assert.match(id, /^key_[0-9A-Za-z]{22}$/)
    assert.match(secret, /^kt_admin_[0-9A-Za-z]{32}$/)
    assert.deepEqual(rest, {
      object: 'ApiKey',
      name: 'Ops',
      role: 'admin',
      productId: null,
      prefix: secret.slice(0, 'kt_admin_'.length + 4),
      createdAt: testStart,
    })
    const used = await app.inject({
      method: 'GET',
      url: '/api/v0/api-keys',
      headers: { authorization: `Bearer ${secret}` },
    })
    assert.equal(used.statusCode, 200, used.body)
  })

  it("creates a product key for a product, whose secret works on that product's licenses", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Photo Editor back end', role: 'product', productId },
    })

    assert.equal(res.statusCode, 201, res.body)
    const { secret, ...rest } = res.json()
    assert.match(secret, /^kt_prod_[0-9A-Za-z]{32}$/)
    assert.deepEqual([rest.role, rest.productId, rest.prefix], ['product', productId, secret.slice(0, 12)])
    const used = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: { authorization: `Bearer ${secret}` },
      payload: { productId },
    })
    assert.equal(used.statusCode, 201, used.body)
  })

  it('gives every key its own secret', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const secrets = new Set<string>()
    for (let i = 0; i < 5; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/api-keys',
        headers,
        payload: { name: 'Same name', role: 'admin' },
      })
      secrets.add(res.json().secret)
    }

    assert.equal(secrets.size, 5)
  })

  it('stores only a keyed 64-hex digest of the secret, never the secret', async (t) => {
    const { app, headers, connection } = await buildTestApp(t, database)
    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Ops', role: 'admin' },
    })
    const { id, secret, prefix } = res.json()

    const row = await connection.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow()

    assert.match(row.digest, /^[0-9a-f]{64}$/)
    assert.notEqual(row.digest, createHash('sha256').update(secret).digest('hex'), 'an unkeyed hash')
    assert.equal(row.prefix, prefix)
    const random = secret.slice('kt_admin_'.length)
    for (const value of Object.values(row)) {
      assert.ok(!String(value).includes(random.slice(4)), `a column holds the secret: ${String(value)}`)
    }
  })

  it('answers 400 validation_failed at #/productId for a product key without a productId', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Orphan', role: 'product' },
    })

    const problem = assertProblem(res, 400, 'validation_failed')
    assert.deepEqual(
      problem.errors?.map((error) => error.pointer),
      ['#/productId'],
    )
  })

  it('answers 400 validation_failed at #/productId for an admin key with a productId', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Scoped admin', role: 'admin', productId },
    })

    const problem = assertProblem(res, 400, 'validation_failed')
    assert.deepEqual(
      problem.errors?.map((error) => error.pointer),
      ['#/productId'],
    )
  })

  it('answers 404 product_not_found at #/productId for an unknown product', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'Lost', role: 'product', productId: 'prd_doesNotExist000000000' },
    })

    const problem = assertProblem(res, 404, 'product_not_found')
    assert.deepEqual(
      problem.errors?.map((error) => error.pointer),
      ['#/productId'],
    )
  })

  it('answers 400 validation_failed for a missing, empty or too long name, an unknown role or a bad productId', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const [payload, pointer] of [
      [{ role: 'admin' }, '#/name'],
      [{ name: '', role: 'admin' }, '#/name'],
      [{ name: 'x'.repeat(201), role: 'admin' }, '#/name'],
      [{ name: 'Root', role: 'root' }, '#/role'],
      [{ name: 'Root' }, '#/role'],
      [{ name: 'Scoped', role: 'product', productId: 'lic_abc' }, '#/productId'],
      [{ name: 'Scoped', role: 'product', productId, secret: 'kt_admin_mine' }, '#/secret'],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/api/v0/api-keys', headers, payload })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        [pointer],
        JSON.stringify(payload),
      )
    }
  })

  it('answers 403 forbidden when a product key creates a key, even for its own product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)
    const other = await createProduct(app, headers)

    for (const payload of [
      { name: 'Escalate', role: 'admin' },
      { name: 'Sibling', role: 'product', productId },
      { name: 'Foreign', role: 'product', productId: other },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/api/v0/api-keys', headers: productKey, payload })

      assertProblem(res, 403, 'forbidden')
    }
  })
})
