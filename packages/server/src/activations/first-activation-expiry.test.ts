import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, testStart } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { call } from '../testing/vendors.js'

const day = 86_400

describeEachDatabase('expiry from the first activation', (database) => {
  it('sets the expiration date exactly once, atomically, with one event, when 20 machines activate at the same time', async (t) => {
    const { app, headers, productId, clock, services, admin } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Trial',
      maxActivations: 20,
      duration: 30 * day,
      expirationBasis: 'firstActivation',
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    // Every activation reads its own instant, so each would set a different date.
    let tick = 0
    clock.now = () => new Date(Date.parse(testStart) + ++tick * 1000)

    const results = await Promise.all(
      Array.from({ length: 20 }, (_, machine) =>
        services.activations.activateByKey(admin, {
          key: license.key,
          productId,
          fingerprint: `machine-${machine}`,
        }),
      ),
    )

    assert.deepEqual(
      results.map((result) => result.outcome),
      Array(20).fill('created'),
    )
    const starters = results.filter((result) => result.expirationStarted !== null)
    assert.equal(starters.length, 1, 'exactly one activation started the expiry')
    const [first] = starters
    assert.ok(first?.expirationStarted)
    assert.equal(first.expirationStarted.getTime(), first.activation.createdAt.getTime() + 30 * day * 1000)
    const stored = await call(app, headers, 'GET', `/licenses/${license.id}`, 200)
    assert.equal(stored.expirationDate, first.expirationStarted.toISOString())
    assert.equal(stored.activationCount, 20)
    const started = await call(app, headers, 'GET', '/events?filter=type:eq:license.expiration_started', 200)
    assert.deepEqual(
      started.data.map((event: { data: { id: string; expirationDate: string; activationCount: number } }) => [
        event.data.id,
        event.data.expirationDate,
        event.data.activationCount,
      ]),
      [[license.id, stored.expirationDate, 1]],
      'one event tells billing and support when the paid time began',
    )

    await call(app, headers, 'DELETE', `/activations/${first.activation.id}`, 204)
    await call(app, headers, 'POST', `/licenses/${license.id}/activations`, 201, { fingerprint: 'later' })
    assert.equal(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).expirationDate,
      stored.expirationDate,
      'later activations leave it alone',
    )
  })
})
