import assert from 'node:assert/strict'
import { it } from 'node:test'
import { LicenseTokenError, validateLicenseToken } from '@keyturn/client'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem, insertManyLicenses } from '../../testing/licenses.js'
import { call } from '../../testing/vendors.js'

const ids = (page: { data: { id: string }[] }) => page.data.map((license) => license.id)

describeEachDatabase('licenses: metadata, customers and entitlements', (database) => {
  it('stores metadata on create, merges it key by key on PATCH (null removes), and on products too', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      metadata: { subscription: 'sub_1', seats: 5, trial: true, gone: null },
    })
    assert.deepEqual(license.metadata, { subscription: 'sub_1', seats: 5, trial: true })

    const patched = await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, {
      metadata: { seats: 6, trial: null, order: 'ord_9' },
    })
    assert.deepEqual(patched.metadata, { subscription: 'sub_1', seats: 6, order: 'ord_9' })
    assert.deepEqual(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).metadata,
      patched.metadata,
    )

    const product = await call(app, headers, 'PATCH', `/products/${productId}`, 200, {
      metadata: { sku: 'PE-1' },
    })
    assert.deepEqual(product.metadata, { sku: 'PE-1' })
    const cleared = await call(app, headers, 'PATCH', `/products/${productId}`, 200, {
      metadata: { sku: null },
    })
    assert.deepEqual(cleared.metadata, {})
  })

  it('refuses a PATCH that would take metadata past 50 keys or 8 KiB, and changes nothing', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const forty = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`a${i}`, i]))
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, metadata: forty })
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`b${i}`, i]))
    const big = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`a${i}`, 'x'.repeat(500)]))

    for (const metadata of [eleven, big]) {
      const res = await app.inject({
        method: 'PATCH',
        url: `/api/v0/licenses/${license.id}`,
        headers,
        payload: { metadata, maxActivations: 9 },
      })
      expectInvalidField(res, '#/metadata')
    }
    const after = await call(app, headers, 'GET', `/licenses/${license.id}`, 200)
    assert.deepEqual([after.metadata, after.maxActivations], [forty, 1])
  })

  it('filters licenses by metadata.<key>:eq:<value> (strings, numbers, booleans), customerId and policyId', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const customer = await call(app, headers, 'POST', '/customers', 201, { email: 'ada@example.com' })
    const a = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      customerId: customer.id,
      metadata: { 'stripe.sub': 'sub_A', seats: 5, trial: true },
    })
    clock.advance(1000)
    const b = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      metadata: { 'stripe.sub': 'sub_B', seats: '5', trial: false },
    })
    await call(app, headers, 'POST', '/licenses', 201, { productId })
    const list = async (filter: string) =>
      ids(
        await call(
          app,
          headers,
          'GET',
          `/licenses?sort=createdAt:asc&filter=${encodeURIComponent(filter)}`,
          200,
        ),
      )

    assert.deepEqual(await list('metadata.stripe.sub:eq:sub_A'), [a.id])
    assert.deepEqual(await list('metadata.stripe.sub:eq:sub_C'), [])
    assert.deepEqual(await list('metadata.seats:eq:5'), [a.id, b.id], 'the number 5 and the string "5"')
    assert.deepEqual(await list('metadata.trial:eq:true'), [a.id])
    assert.deepEqual(await list('metadata.trial:eq:false'), [b.id])
    assert.deepEqual(await list(`metadata.seats:eq:5,customerId:eq:${customer.id}`), [a.id])
    assert.deepEqual(await list(`customerId:eq:${customer.id}`), [a.id])
    for (const bad of ['metadata.seats:gt:4', 'metadata.:eq:x', 'metadata.bad key:eq:x', 'metadata:eq:x']) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/v0/licenses?filter=${encodeURIComponent(bad)}`,
        headers,
      })
      expectProblem(res, 400, 'invalid_filter')
    }
  })

  it('finds the license holding a metadata value and the 10,002 sharing one, and follows PATCHes', async (t) => {
    const { app, headers, productId, clock, connection } = await buildTestApp(t, database)
    // 10,001 licenses on one plan: more than SQLite looks a value up through its metadata index for
    // (KyselyLicenseStore's sparseMetadataLimit), so both of its ways answer here.
    await insertManyLicenses(connection, productId, 10_001, { plan: 'pro' })
    clock.advance(1000)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      metadata: { plan: 'pro', subscription: 'sub_1' },
    })
    const list = (filter: string) =>
      call(app, headers, 'GET', `/licenses?limit=2&filter=${encodeURIComponent(filter)}`, 200)

    const pro = await list('metadata.plan:eq:pro')
    assert.deepEqual([ids(pro), pro.totalCount], [[license.id, 'lic_bulk9999'], 10_002])
    for (const [owner, total] of [
      [productId, 10_002],
      [await createProduct(app, headers), 0],
    ] as const) {
      const scoped = await call(
        app,
        await productKeyHeaders(app, headers, owner),
        'GET',
        `/licenses?limit=1&filter=${encodeURIComponent('metadata.plan:eq:pro')}`,
        200,
      )
      assert.equal(scoped.totalCount, total, 'a product key counts only its product')
    }
    assert.deepEqual(ids(await list('metadata.subscription:eq:sub_1')), [license.id])

    await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, {
      metadata: { plan: 'team', subscription: null, seats: 3 },
    })
    assert.equal((await list('metadata.plan:eq:pro')).totalCount, 10_001)
    assert.deepEqual(ids(await list('metadata.plan:eq:team')), [license.id])
    assert.deepEqual(ids(await list('metadata.seats:eq:3')), [license.id])
    assert.deepEqual(ids(await list('metadata.subscription:eq:sub_1')), [])
  })

  it('shows the sorted union of own and policy entitlements, and answers 400 naming unknown codes', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    for (const code of ['pdf', 'sync', 'zip']) {
      await call(app, headers, 'POST', '/entitlements', 201, { productId, code, name: code })
    }
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Plan',
      entitlements: ['zip', 'pdf'],
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      policyId: policy.id,
      entitlements: ['sync', 'pdf'],
    })
    assert.deepEqual(license.entitlements, ['pdf', 'sync', 'zip'])
    assert.deepEqual(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).entitlements,
      license.entitlements,
    )

    const replaced = await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, { entitlements: [] })
    assert.deepEqual(replaced.entitlements, ['pdf', 'zip'])
    const listed = await call(app, headers, 'GET', '/licenses', 200)
    assert.deepEqual(listed.data[0].entitlements, ['pdf', 'zip'])

    const unknown = await app.inject({
      method: 'PATCH',
      url: `/api/v0/licenses/${license.id}`,
      headers,
      payload: { entitlements: ['sync', 'teleport'] },
    })
    assert.match(expectInvalidField(unknown, '#/entitlements').detail, /teleport/)
    assert.deepEqual((await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).entitlements, [
      'pdf',
      'zip',
    ])
  })

  it('validates entitlements online: entitlements_missing, after revoked, expired, suspended and not_activated', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'pdf', name: 'PDF' })
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'sync', name: 'Sync' })
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Plan',
      entitlements: ['pdf'],
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      policyId: policy.id,
      expirationDate: '2030-06-01T00:00:00.000Z',
    })
    const validate = async (extra: Record<string, unknown>) => {
      const result = await call(app, headers, 'POST', '/licenses/validate', 200, {
        key: license.key,
        productId,
        ...extra,
      })
      return [result.isValid, result.reason]
    }

    assert.deepEqual(await validate({}), [true, null])
    assert.deepEqual(await validate({ entitlements: ['pdf'] }), [true, null])
    assert.deepEqual(await validate({ entitlements: ['pdf', 'sync'] }), [false, 'entitlements_missing'])
    assert.deepEqual(await validate({ entitlements: ['never-made'] }), [false, 'entitlements_missing'])
    assert.deepEqual(await validate({ entitlements: ['sync'], fingerprint: 'm1' }), [false, 'not_activated'])

    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, { entitlements: ['pdf', 'sync'] })
    assert.deepEqual(await validate({ entitlements: ['pdf', 'sync'] }), [true, null], 'policy edits are live')

    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, { entitlements: [] })
    await call(app, headers, 'POST', `/products/${productId}/suspend`, 200)
    assert.deepEqual(await validate({ entitlements: ['pdf'] }), [false, 'suspended'])
    await call(app, headers, 'POST', `/products/${productId}/resume`, 200)
    clock.set('2030-07-01T00:00:00.000Z')
    assert.deepEqual(await validate({ entitlements: ['pdf'] }), [false, 'expired'])
    await call(app, headers, 'POST', `/licenses/${license.id}/revoke`, 200)
    assert.deepEqual(await validate({ entitlements: ['pdf'] }), [false, 'revoked'])
  })

  it('puts the entitlements in tokens, which validateLicenseToken returns and checks with requireEntitlements', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'pdf', name: 'PDF' })
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'sync', name: 'Sync' })
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Plan',
      entitlements: ['pdf'],
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    const product = await call(app, headers, 'GET', `/products/${productId}`, 200)
    const check = async (token: string, requireEntitlements: string[]) =>
      validateLicenseToken({
        productId,
        publicKey: product.publicKey,
        token,
        now: new Date('2030-01-01T00:00:00.000Z'),
        requireEntitlements,
      })

    const before = await call(app, headers, 'POST', `/licenses/${license.id}/tokens`, 201, {})
    assert.deepEqual(before.payload.entitlements, ['pdf'])
    assert.deepEqual((await check(before.token, ['pdf'])).entitlements, ['pdf'])
    await assert.rejects(
      check(before.token, ['pdf', 'sync']),
      (error) => error instanceof LicenseTokenError && error.code === 'entitlements_missing',
    )

    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, { entitlements: ['pdf', 'sync'] })
    const after = await call(app, headers, 'POST', '/licenses/tokens', 201, { key: license.key, productId })
    assert.deepEqual(after.payload.entitlements, ['pdf', 'sync'])
    assert.deepEqual((await check(after.token, ['pdf', 'sync'])).entitlements, ['pdf', 'sync'])
    await assert.rejects(check(before.token, ['sync']), { code: 'entitlements_missing' })
  })
})
