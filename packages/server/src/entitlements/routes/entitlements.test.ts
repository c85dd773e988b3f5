import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem } from '../../testing/licenses.js'
import { call, roleHeaders } from '../../testing/vendors.js'

describeEachDatabase('/api/v0/entitlements', (database) => {
  it('creates, gets, lists, updates and deletes an entitlement', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const pdf = await call(app, headers, 'POST', '/entitlements', 201, {
      productId,
      code: 'export-pdf',
      name: 'Export to PDF',
    })
    assert.match(pdf.id, /^ent_[0-9A-Za-z]{22}$/)
    assert.deepEqual(pdf, {
      id: pdf.id,
      object: 'Entitlement',
      productId,
      code: 'export-pdf',
      name: 'Export to PDF',
      createdAt: testStart,
      updatedAt: testStart,
    })
    clock.advance(1000)
    const sync = await call(app, headers, 'POST', '/entitlements', 201, {
      productId,
      code: 'a.sync_2',
      name: 'Sync',
    })

    assert.deepEqual(await call(app, headers, 'GET', `/entitlements/${pdf.id}`, 200), pdf)
    const byCode = await call(app, headers, 'GET', '/entitlements?sort=code:asc', 200)
    assert.deepEqual(
      byCode.data.map((entitlement: { code: string }) => entitlement.code),
      ['a.sync_2', 'export-pdf'],
    )
    const filtered = await call(app, headers, 'GET', '/entitlements?filter=code:eq:export-pdf', 200)
    assert.deepEqual(filtered.data, [pdf])

    const renamed = await call(app, headers, 'PATCH', `/entitlements/${sync.id}`, 200, { code: 'cloud-sync' })
    assert.equal(renamed.code, 'cloud-sync')
    await call(app, headers, 'DELETE', `/entitlements/${pdf.id}`, 204)
    expectProblem(
      await app.inject({ method: 'GET', url: `/api/v0/entitlements/${pdf.id}`, headers }),
      404,
      'entitlement_not_found',
    )
  })

  it('answers 409 entitlement_code_taken for a code the product has, and allows it on another product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'pro', name: 'Pro' })
    const second = await call(app, headers, 'POST', '/entitlements', 201, {
      productId,
      code: 'lite',
      name: 'Lite',
    })

    const taken = await app.inject({
      method: 'POST',
      url: '/api/v0/entitlements',
      headers,
      payload: { productId, code: 'pro', name: 'Again' },
    })
    const renamed = await app.inject({
      method: 'PATCH',
      url: `/api/v0/entitlements/${second.id}`,
      headers,
      payload: { code: 'pro' },
    })

    expectProblem(taken, 409, 'entitlement_code_taken')
    expectProblem(renamed, 409, 'entitlement_code_taken')
    await call(app, headers, 'POST', '/entitlements', 201, { productId: other, code: 'pro', name: 'Pro' })
  })

  it('answers 400 for a bad code and 404 product_not_found for an unknown product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const post = (payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: '/api/v0/entitlements', headers, payload })

    for (const code of ['', 'Pro', '-pro', 'a b', 'x'.repeat(65)]) {
      expectInvalidField(await post({ productId, code, name: 'n' }), '#/code')
    }
    expectProblem(await post({ productId: 'prd_none', code: 'pro', name: 'n' }), 404, 'product_not_found')
  })

  it('detaches a deleted entitlement from every policy and license', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const pro = await call(app, headers, 'POST', '/entitlements', 201, {
      productId,
      code: 'pro',
      name: 'Pro',
    })
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'sync', name: 'Sync' })
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Plan',
      entitlements: ['pro', 'sync'],
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      policyId: policy.id,
      entitlements: ['pro'],
    })
    assert.deepEqual(license.entitlements, ['pro', 'sync'])

    await call(app, headers, 'DELETE', `/entitlements/${pro.id}`, 204)

    assert.deepEqual((await call(app, headers, 'GET', `/policies/${policy.id}`, 200)).entitlements, ['sync'])
    assert.deepEqual((await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).entitlements, ['sync'])
  })

  it('scopes a product key to its product (403 creating for another, 404 reading another) and forbids client keys', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const foreign = await call(app, headers, 'POST', '/entitlements', 201, {
      productId: other,
      code: 'x',
      name: 'X',
    })
    const productKey = await roleHeaders(app, headers, 'product', productId)
    const clientKey = await roleHeaders(app, headers, 'client', productId)

    const own = await call(app, productKey, 'POST', '/entitlements', 201, { productId, code: 'y', name: 'Y' })
    expectProblem(
      await app.inject({
        method: 'POST',
        url: '/api/v0/entitlements',
        headers: productKey,
        payload: { productId: other, code: 'z', name: 'Z' },
      }),
      403,
      'forbidden',
    )
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await app.inject({
        method,
        url: `/api/v0/entitlements/${foreign.id}`,
        headers: productKey,
        ...(method === 'PATCH' ? { payload: { name: 'n' } } : {}),
      })
      expectProblem(res, 404, 'entitlement_not_found')
    }
    const listed = await call(app, productKey, 'GET', '/entitlements', 200)
    assert.deepEqual(listed.data, [own])
    assert.equal((await call(app, productKey, 'GET', `/entitlements?productId=${other}`, 200)).totalCount, 0)
    for (const [method, url] of [
      ['GET', '/entitlements'],
      ['GET', `/entitlements/${own.id}`],
      ['DELETE', `/entitlements/${own.id}`],
    ] as const) {
      expectProblem(await app.inject({ method, url: `/api/v0${url}`, headers: clientKey }), 403, 'forbidden')
    }
  })
})
