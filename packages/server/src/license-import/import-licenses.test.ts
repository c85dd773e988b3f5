import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { expectProblem } from '../testing/licenses.js'
import { call, roleHeaders } from '../testing/vendors.js'

// The test clock stands at 2030-01-01T00:00:00Z.
describeEachDatabase('POST /licenses/import', (database) => {
  it('imports rows as they were, each alone: a bad row writes nothing, a second run makes nothing twice', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Floating',
      maxActivations: 2,
      heartbeatTtl: 3600,
    })
    const rows = [
      {
        productId,
        externalId: 'kg-1',
        key: 'LEGACY-0001',
        policyId: policy.id,
        customerEmail: 'Ada@Example.com',
        customerName: 'Ada',
        uses: 7,
        metadata: { plan: 'pro' },
        activations: [
          { fingerprint: 'fresh', name: 'Laptop', lastSeenAt: '2029-12-31T23:30:00.000Z' },
          { fingerprint: 'stale', lastSeenAt: '2029-12-01T00:00:00.000Z' },
        ],
      },
      {
        productId,
        externalId: 'kg-2',
        key: 'LEGACY-0002',
        status: 'revoked',
        customerEmail: 'ada@example.com',
        customerName: 'Ada',
      },
      // Three machines for two seats: nothing of this row, not even its new customer, is written.
      {
        productId,
        externalId: 'kg-3',
        key: 'LEGACY-0003',
        maxActivations: 2,
        customerEmail: 'bob@example.com',
        activations: [{ fingerprint: 'a' }, { fingerprint: 'b' }, { fingerprint: 'c' }],
      },
      { productId, externalId: 'kg-4', status: 'suspended', expirationDate: '2031-01-01T00:00:00.000Z' },
      { productId, key: 'LEGACY-0005', status: 'expired', expirationDate: '2029-06-01T00:00:00.000Z' },
      { productId, externalId: 'kg-6', policyId: 'pol_unknown' },
    ]

    const first = await call(app, headers, 'POST', '/licenses/import', 200, { licenses: rows })
    const second = await call(app, headers, 'POST', '/licenses/import', 200, { licenses: rows })

    assert.deepEqual(first.summary, { rows: 6, created: 4, unchanged: 0, errors: 2 })
    assert.deepEqual(
      first.results.map((r: { index: number; status: string }) => [r.index, r.status]),
      [
        [0, 'created'],
        [1, 'created'],
        [2, 'error'],
        [3, 'created'],
        [4, 'created'],
        [5, 'error'],
      ],
    )
    assert.equal(first.results[2].problem.code, 'activation_limit_reached')
    assert.equal(first.results[2].problem.errors[0].pointer, '#/licenses/2/activations')
    assert.deepEqual(first.results[5].problem.errors, [
      { pointer: '#/licenses/5/policyId', detail: `Product ${productId} has no policy pol_unknown.` },
    ])
    assert.deepEqual(second.summary, { rows: 6, created: 0, unchanged: 4, errors: 2 })
    assert.deepEqual(
      second.results
        .filter((r: { status: string }) => r.status === 'unchanged')
        .map((r: { licenseId: string }) => r.licenseId),
      first.results
        .filter((r: { status: string }) => r.status === 'created')
        .map((r: { licenseId: string }) => r.licenseId),
    )

    const [one, two, , four, five] = first.results.map((r: { licenseId?: string }) => r.licenseId)
    const imported = await call(app, headers, 'GET', `/licenses/${one}`, 200)
    assert.deepEqual(
      [imported.key, imported.externalId, imported.uses, imported.maxActivations, imported.heartbeatTtl],
      ['LEGACY-0001', 'kg-1', 7, 2, 3600],
    )
    // The stale machine's lease (last seen a month ago, a one-hour heartbeat) ended before the import.
    assert.equal(imported.activationCount, 1)
    const machines = await call(app, headers, 'GET', `/licenses/${one}/activations`, 200)
    assert.deepEqual(
      machines.data.map((m: { fingerprint: string; lastSeenAt: string }) => [m.fingerprint, m.lastSeenAt]),
      [['fresh', '2029-12-31T23:30:00.000Z']],
    )
    const customers = await call(app, headers, 'GET', '/customers', 200)
    // One customer for both rows, whichever of them (imported side by side) made it.
    assert.deepEqual(
      customers.data.map((c: { email: string; name: string }) => [c.email.toLowerCase(), c.name]),
      [['ada@example.com', 'Ada']],
    )
    assert.equal((await call(app, headers, 'GET', `/licenses/${two}`, 200)).customerId, imported.customerId)
    assert.equal((await call(app, headers, 'GET', `/licenses/${two}`, 200)).status, 'revoked')
    const suspended = await call(app, headers, 'GET', `/licenses/${four}`, 200)
    assert.deepEqual([suspended.status, suspended.metadata], ['revoked', { importedStatus: 'suspended' }])
    assert.equal((await call(app, headers, 'GET', `/licenses/${five}`, 200)).status, 'expired')
    const valid = await call(app, headers, 'POST', '/licenses/validate', 200, {
      key: 'LEGACY-0001',
      productId,
      fingerprint: 'fresh',
    })
    assert.equal(valid.isValid, true)

    const byExternalId = await call(
      app,
      headers,
      'GET',
      `/licenses?externalId=kg-4&productId=${productId}`,
      200,
    )
    assert.deepEqual(
      byExternalId.data.map((l: { id: string }) => l.id),
      [four],
    )
    const created = await call(app, headers, 'GET', '/events?filter=type:eq:license.created', 200)
    assert.equal(created.data.length, 4, 'one license.created per imported row, none for the re-run')
  })

  it('takes an externalId on POST /licenses too, unique per product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await call(app, headers, 'POST', '/products', 201, { name: 'Other' })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, externalId: 'sub-42' })
    assert.equal(license.externalId, 'sub-42')
    await call(app, headers, 'POST', '/licenses', 201, { productId: other.id, externalId: 'sub-42' })
    const taken = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId, externalId: 'sub-42' },
    })
    expectProblem(taken, 409, 'external_id_taken')
  })

  it('is for admin keys only', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const payload = { licenses: [{ productId }] }
    for (const role of ['product', 'client'] as const) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/import',
        headers: await roleHeaders(app, headers, role, productId),
        payload,
      })
      expectProblem(res, 403, 'forbidden')
    }
    assert.equal((await call(app, headers, 'GET', '/licenses', 200)).totalCount, 0)
  })
})
