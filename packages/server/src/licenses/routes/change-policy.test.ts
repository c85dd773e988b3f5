import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem } from '../../testing/licenses.js'
import { call } from '../../testing/vendors.js'

const day = 86_400

describeEachDatabase('licenses: moving a license to another policy', (database) => {
  it("takes the new policy's limits and entitlements, keeps its own, and records license.policy_changed", async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    for (const code of ['basic', 'pro-export', 'beta']) {
      await call(app, headers, 'POST', '/entitlements', 201, { productId, code, name: code })
    }
    const basic = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Basic',
      maxActivations: 1,
      duration: 30 * day,
      entitlements: ['basic'],
    })
    const pro = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Pro',
      maxActivations: 5,
      heartbeatTtl: 600,
      maxUses: 1000,
      duration: 365 * day,
      entitlements: ['pro-export'],
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      policyId: basic.id,
      entitlements: ['beta'],
    })
    clock.advance(10 * day * 1000)

    const moved = await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, { policyId: pro.id })
    assert.deepEqual(
      [moved.policyId, moved.maxActivations, moved.heartbeatTtl, moved.maxUses, moved.entitlements],
      [pro.id, 5, 600, 1000, ['beta', 'pro-export']],
    )
    assert.equal(moved.expirationDate, license.expirationDate, 'expiry: keep is the default')

    const [event] = (await call(app, headers, 'GET', '/events?limit=1', 200)).data
    assert.equal(event.type, 'license.policy_changed')
    assert.deepEqual(
      [event.data.id, event.data.policyId, event.data.previousPolicyId],
      [license.id, pro.id, basic.id],
    )

    const back = await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, {
      policyId: basic.id,
      maxActivations: 2,
      expiry: 'reset',
    })
    assert.deepEqual(
      [back.maxActivations, back.heartbeatTtl, back.maxUses],
      [2, null, null],
      'the request wins',
    )
    assert.equal(back.expirationDate, new Date(clock.now().getTime() + 30 * day * 1000).toISOString())
    assert.deepEqual(back.entitlements, ['basic', 'beta'])

    const none = await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, { policyId: null })
    assert.deepEqual([none.policyId, none.maxActivations, none.entitlements], [null, 2, ['beta']])
  })

  it('keeps machines above a lower limit working and refuses new ones until under it', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const [wide, narrow] = await Promise.all(
      [5, 3].map((maxActivations) =>
        call(app, headers, 'POST', '/policies', 201, {
          productId,
          name: `${maxActivations} seats`,
          maxActivations,
        }),
      ),
    )
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: wide.id })
    for (let machine = 0; machine < 5; machine++) {
      await call(app, headers, 'POST', `/licenses/${license.id}/activations`, 201, {
        fingerprint: `m${machine}`,
      })
    }
    await call(app, headers, 'PATCH', `/licenses/${license.id}`, 200, { policyId: narrow.id })

    for (let machine = 0; machine < 5; machine++) {
      const answer = await call(app, headers, 'POST', '/licenses/validate', 200, {
        key: license.key,
        productId,
        fingerprint: `m${machine}`,
      })
      assert.equal(answer.isValid, true, `machine m${machine} keeps working`)
    }
    const refused = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/activations`,
      headers,
      payload: { fingerprint: 'new' },
    })
    expectProblem(refused, 409, 'activation_limit_reached')
  })

  it('never lets concurrent activations past the limit in force when each commits', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const [one, three] = await Promise.all(
      [1, 3].map((maxActivations) =>
        call(app, headers, 'POST', '/policies', 201, {
          productId,
          name: `${maxActivations} seats`,
          maxActivations,
        }),
      ),
    )
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: one.id })
    await call(app, headers, 'POST', `/licenses/${license.id}/activations`, 201, { fingerprint: 'first' })
    const activate = (machine: number) =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses/activate',
        headers,
        payload: { key: license.key, productId, fingerprint: `machine-${machine}` },
      })
    const [change, ...answers] = await Promise.all([
      app.inject({
        method: 'PATCH',
        url: `/api/v0/licenses/${license.id}`,
        headers,
        payload: { policyId: three.id },
      }),
      ...Array.from({ length: 50 }, (_, machine) => activate(machine)),
    ])
    assert.equal(change.statusCode, 200, change.body)
    const statuses = answers.map((answer) => answer.statusCode)
    assert.deepEqual(
      [...new Set(statuses)].filter((status) => status !== 201 && status !== 409),
      [],
    )
    const created = statuses.filter((status) => status === 201).length
    const after = await call(app, headers, 'GET', `/licenses/${license.id}`, 200)
    assert.ok(created <= 2, `${created} activations past a limit of 3 with one machine already on`)
    assert.equal(after.activationCount, 1 + created)
    // Whatever the order, the new limit holds from now on: fill it, then one more is refused.
    for (let machine = after.activationCount; machine < 3; machine++) {
      assert.equal((await activate(100 + machine)).statusCode, 201)
    }
    expectProblem(await activate(200), 409, 'activation_limit_reached')
  })

  it("refuses another product's policy, a policy that does not exist, and expiry without policyId; nothing changes", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await call(app, headers, 'POST', '/products', 201, { name: 'Other' })
    const foreign = await call(app, headers, 'POST', '/policies', 201, {
      productId: other.id,
      name: 'Foreign',
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, maxActivations: 2 })
    const patch = (payload: Record<string, unknown>) =>
      app.inject({ method: 'PATCH', url: `/api/v0/licenses/${license.id}`, headers, payload })

    expectInvalidField(await patch({ policyId: foreign.id }), '#/policyId')
    expectInvalidField(await patch({ policyId: 'pol_nothingHere000000000' }), '#/policyId')
    expectInvalidField(await patch({ expiry: 'reset', maxActivations: 4 }), '#/expiry')
    expectInvalidField(await patch({ policyId: foreign.id, expiry: 'later' }), '#/expiry')
    const after = await call(app, headers, 'GET', `/licenses/${license.id}`, 200)
    assert.deepEqual([after.policyId, after.maxActivations, after.updatedAt], [null, 2, license.updatedAt])
  })
})
