import assert from 'node:assert/strict'
import { it } from 'node:test'
import { type EntitlementId, maxDurationSeconds, type PolicyId } from '@keyturn/protocol'
import { buildTestApp, createProduct, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem } from '../../testing/licenses.js'
import { call, roleHeaders } from '../../testing/vendors.js'
import { KyselyPolicyStore } from '../kysely-policy-store.js'

const year = 365 * 86_400

describeEachDatabase('/api/v0/policies', (database) => {
  it('creates a policy with the defaults, and gets, lists, updates and deletes it', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'pdf', name: 'PDF' })
    const basic = await call(app, headers, 'POST', '/policies', 201, { productId, name: 'Basic' })
    assert.match(basic.id, /^pol_[0-9A-Za-z]{22}$/)
    assert.deepEqual(basic, {
      id: basic.id,
      object: 'Policy',
      productId,
      name: 'Basic',
      maxActivations: 1,
      duration: null,
      expirationBasis: 'creation',
      heartbeatTtl: null,
      maxUses: null,
      entitlements: [],
      metadata: {},
      createdAt: testStart,
      updatedAt: testStart,
      licenseFileTtl: 365 * 86_400,
      tokenTtlMax: null,
      licenseFileMetadata: false,
      maxTransfers: 3,
      transferPeriod: 30 * 86_400,
      checkInInterval: null,
      gracePeriod: null,
      seatsPerQuantity: false,
    })
    assert.deepEqual(await call(app, headers, 'GET', `/policies/${basic.id}`, 200), basic)

    clock.advance(1000)
    const updated = await call(app, headers, 'PATCH', `/policies/${basic.id}`, 200, {
      name: 'Pro',
      maxActivations: null,
      duration: year,
      expirationBasis: 'firstActivation',
      entitlements: ['pdf'],
      metadata: { stripePriceId: 'price_1' },
      maxTransfers: null,
      transferPeriod: 7 * 86_400,
      seatsPerQuantity: true,
    })
    assert.deepEqual(updated, {
      ...basic,
      name: 'Pro',
      maxActivations: null,
      duration: year,
      expirationBasis: 'firstActivation',
      entitlements: ['pdf'],
      metadata: { stripePriceId: 'price_1' },
      updatedAt: '2030-01-01T00:00:01.000Z',
      maxTransfers: null,
      transferPeriod: 7 * 86_400,
      seatsPerQuantity: true,
    })
    const listed = await call(app, headers, 'GET', `/policies?productId=${productId}&sort=name:asc`, 200)
    assert.deepEqual(listed.data, [updated])

    await call(app, headers, 'DELETE', `/policies/${basic.id}`, 204)
    expectProblem(
      await app.inject({ method: 'GET', url: `/api/v0/policies/${basic.id}`, headers }),
      404,
      'policy_not_found',
    )
  })

  it('answers 400 naming unknown entitlement codes, and for durations under an hour', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    await call(app, headers, 'POST', '/entitlements', 201, { productId: other, code: 'elsewhere', name: 'E' })
    const post = (payload: Record<string, unknown>) =>
      app.inject({
        method: 'POST',
        url: '/api/v0/policies',
        headers,
        payload: { productId, name: 'P', ...payload },
      })

    const unknown = expectInvalidField(await post({ entitlements: ['nope', 'elsewhere'] }), '#/entitlements')
    assert.match(unknown.detail, /nope, elsewhere/)
    expectInvalidField(await post({ duration: 3599 }), '#/duration')
    expectInvalidField(await post({ expirationBasis: 'payment' }), '#/expirationBasis')
    expectInvalidField(await post({ maxActivations: 0 }), '#/maxActivations')
    assert.equal((await call(app, headers, 'GET', '/policies', 200)).totalCount, 0, 'nothing was written')
  })

  it('stores durations up to 100 years, past 32-bit seconds, and answers 400 beyond', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'P',
      duration: 2 ** 31,
    })
    const updated = await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, {
      duration: maxDurationSeconds,
    })
    const refused = await app.inject({
      method: 'PATCH',
      url: `/api/v0/policies/${policy.id}`,
      headers,
      payload: { duration: maxDurationSeconds + 1 },
    })

    assert.equal(policy.duration, 2 ** 31)
    assert.equal(updated.duration, maxDurationSeconds)
    assert.equal(
      (await call(app, headers, 'GET', `/policies/${policy.id}`, 200)).duration,
      maxDurationSeconds,
    )
    expectInvalidField(refused, '#/duration')
  })

  it('writes nothing and tells the service when an entitlement was deleted between its lookup and the write', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, { productId, name: 'P' })
    const store = new KyselyPolicyStore(connection.db)
    const gone = 'ent_deletedmeanwhile' as EntitlementId // resolved, then deleted by another request

    const updated = await store.update(policy.id, { updatedAt: new Date(testStart), entitlementIds: [gone] })
    const inserted = await store.insert(
      {
        ...policy,
        id: 'pol_racedwithadelete' as PolicyId,
        createdAt: new Date(testStart),
        updatedAt: new Date(testStart),
      },
      [gone],
    )

    assert.equal(updated, 'reference_gone')
    assert.equal(inserted, 'reference_gone')
    assert.deepEqual(
      (await call(app, headers, 'GET', '/policies', 200)).data.map((p: { id: string }) => p.id),
      [policy.id],
    )
    assert.equal((await call(app, headers, 'GET', `/policies/${policy.id}`, 200)).updatedAt, policy.updatedAt)
  })

  it('makes licenses from a creation-based policy: its seats and expiry unless the request gives them', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'pdf', name: 'PDF' })
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Pro yearly',
      maxActivations: 3,
      duration: year,
      maxUses: 1000,
      heartbeatTtl: 3600,
      entitlements: ['pdf'],
    })

    const plain = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    assert.deepEqual(
      [plain.maxUses, plain.heartbeatTtl],
      [1000, 3600],
      'seats and usage come from the policy',
    )
    assert.equal(plain.policyId, policy.id)
    assert.equal(plain.maxActivations, 3)
    assert.equal(plain.expirationDate, '2031-01-01T00:00:00.000Z')
    assert.deepEqual(plain.entitlements, ['pdf'])

    clock.advance(1)
    const overridden = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      policyId: policy.id,
      maxActivations: null,
      expirationDate: null,
    })
    assert.equal(overridden.maxActivations, null)
    assert.equal(overridden.expirationDate, null)
    clock.advance(1)
    const dated = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      policyId: policy.id,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })
    assert.equal(dated.expirationDate, '2030-02-01T00:00:00.000Z')

    // Later edits change neither seats nor dates of existing licenses; entitlements are live.
    clock.advance(1000)
    await call(app, headers, 'POST', '/entitlements', 201, { productId, code: 'sync', name: 'Sync' })
    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, {
      maxActivations: 10,
      duration: 2 * year,
      entitlements: ['pdf', 'sync'],
    })
    const after = await call(app, headers, 'GET', `/licenses/${plain.id}`, 200)
    assert.equal(after.maxActivations, 3)
    assert.equal(after.expirationDate, '2031-01-01T00:00:00.000Z')
    assert.deepEqual(after.entitlements, ['pdf', 'sync'])
    const byPolicy = await call(
      app,
      headers,
      'GET',
      `/licenses?filter=policyId:eq:${policy.id}&sort=createdAt:asc`,
      200,
    )
    assert.deepEqual(
      byPolicy.data.map((license: { id: string }) => license.id),
      [plain.id, overridden.id, dated.id],
    )
  })

  it('makes licenses from a firstActivation policy that do not expire until their first activation', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Trial',
      maxActivations: 2,
      duration: 14 * 86_400,
      expirationBasis: 'firstActivation',
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    assert.equal(license.expirationDate, null)

    clock.set('2030-03-01T12:00:00.000Z')
    await call(app, headers, 'POST', `/licenses/${license.id}/activations`, 201, { fingerprint: 'first' })
    clock.set('2030-03-02T12:00:00.000Z')
    await call(app, headers, 'POST', `/licenses/${license.id}/activations`, 201, { fingerprint: 'second' })

    const activated = await call(app, headers, 'GET', `/licenses/${license.id}`, 200)
    assert.equal(activated.expirationDate, '2030-03-15T12:00:00.000Z', 'set once, by the first activation')
  })

  it('answers 400 at #/policyId for a policy of another product, and 409 policy_in_use on deleting a used policy', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const foreign = await call(app, headers, 'POST', '/policies', 201, { productId: other, name: 'Theirs' })
    const own = await call(app, headers, 'POST', '/policies', 201, { productId, name: 'Ours' })

    for (const policyId of [foreign.id, 'pol_doesNotExist']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers,
        payload: { productId, policyId },
      })
      expectInvalidField(res, '#/policyId')
    }
    await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: own.id })
    expectProblem(
      await app.inject({ method: 'DELETE', url: `/api/v0/policies/${own.id}`, headers }),
      409,
      'policy_in_use',
    )
    assert.equal((await call(app, headers, 'GET', `/policies/${own.id}`, 200)).id, own.id)
  })

  it('scopes a product key to its product and forbids client keys', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const foreign = await call(app, headers, 'POST', '/policies', 201, { productId: other, name: 'Theirs' })
    const productKey = await roleHeaders(app, headers, 'product', productId)
    const clientKey = await roleHeaders(app, headers, 'client', productId)

    const own = await call(app, productKey, 'POST', '/policies', 201, { productId, name: 'Ours' })
    expectProblem(
      await app.inject({
        method: 'POST',
        url: '/api/v0/policies',
        headers: productKey,
        payload: { productId: other, name: 'x' },
      }),
      403,
      'forbidden',
    )
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const res = await app.inject({
        method,
        url: `/api/v0/policies/${foreign.id}`,
        headers: productKey,
        ...(method === 'PATCH' ? { payload: { name: 'n' } } : {}),
      })
      expectProblem(res, 404, 'policy_not_found')
    }
    assert.deepEqual((await call(app, productKey, 'GET', '/policies', 200)).data, [own])
    for (const [method, url] of [
      ['GET', '/policies'],
      ['GET', `/policies/${own.id}`],
      ['DELETE', `/policies/${own.id}`],
    ] as const) {
      expectProblem(await app.inject({ method, url: `/api/v0${url}`, headers: clientKey }), 403, 'forbidden')
    }
  })
})
