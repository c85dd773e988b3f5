import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense } from '../../testing/licenses.js'

const activate = (test: TestApp, licenseId: string, body: Record<string, unknown>, headers = test.headers) =>
  test.app.inject({
    method: 'POST',
    url: `/api/v0/licenses/${licenseId}/activations`,
    headers,
    payload: body,
  })

describeEachDatabase('POST /api/v0/licenses/:id/activations', (database) => {
  it('answers 201 with the activation, and 200 with a fresh lastSeenAt when the fingerprint repeats', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, {
      productId: test.productId,
      maxActivations: 1,
    })

    const first = await activate(test, license.id, {
      fingerprint: 'machine-a',
      name: 'Ada',
      metadata: { os: 'linux' },
    })
    test.clock.advance(60_000)
    const again = await activate(test, license.id, { fingerprint: 'machine-a' })

    assert.equal(first.statusCode, 201, first.body)
    const { id, ...rest } = first.json()
    assert.match(id, /^act_/)
    assert.deepEqual(rest, {
      object: 'Activation',
      licenseId: license.id,
      productId: test.productId,
      fingerprint: 'machine-a',
      name: 'Ada',
      metadata: { os: 'linux' },
      createdAt: '2030-01-01T00:00:00.000Z',
      lastSeenAt: '2030-01-01T00:00:00.000Z',
      lastHeartbeatAt: '2030-01-01T00:00:00.000Z',
      expiresAt: null,
    })
    assert.equal(again.statusCode, 200, again.body)
    assert.equal(again.json().id, id)
    assert.equal(again.json().name, 'Ada')
    assert.equal(again.json().lastSeenAt, '2030-01-01T00:01:00.000Z')
  })

  it('answers 409 activation_limit_reached with the limit and count for a new fingerprint beyond the limit', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, {
      productId: test.productId,
      maxActivations: 2,
    })
    await activate(test, license.id, { fingerprint: 'a' })
    await activate(test, license.id, { fingerprint: 'b' })

    const third = await activate(test, license.id, { fingerprint: 'c' })

    assert.equal(third.statusCode, 409, third.body)
    assert.equal(third.json().code, 'activation_limit_reached')
    assert.equal(third.json().maxActivations, 2)
    assert.equal(third.json().activationCount, 2)
    const events = await test.app.inject({
      method: 'GET',
      url: `/api/v0/events?filter=type:eq:activation.created,licenseId:eq:${license.id}`,
      headers: test.headers,
    })
    const fingerprints = events
      .json()
      .data.map((event: { data: { fingerprint: string } }) => event.data.fingerprint)
    assert.deepEqual(fingerprints.sort(), ['a', 'b'], 'the refused machine has no activation.created')
  })

  it('never limits a license with maxActivations null', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, {
      productId: test.productId,
      maxActivations: null,
    })

    for (let i = 0; i < 12; i++) {
      const res = await activate(test, license.id, { fingerprint: `machine-${i}` })
      assert.equal(res.statusCode, 201, res.body)
    }
  })

  it('answers 409 license_not_active for a revoked, an expired, and a suspended product’s license; reinstate allows it again', async (t) => {
    const test = await buildTestApp(t, database)
    const { app, headers, productId } = test
    const revoked = await createLicense(app, headers, { productId })
    await app.inject({ method: 'POST', url: `/api/v0/licenses/${revoked.id}/revoke`, headers })
    const expiring = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-01-02T00:00:00.000Z',
    })

    const forRevoked = await activate(test, revoked.id, { fingerprint: 'a' })
    assert.equal(forRevoked.statusCode, 409, forRevoked.body)
    assert.equal(forRevoked.json().code, 'license_not_active')

    await app.inject({ method: 'POST', url: `/api/v0/licenses/${revoked.id}/reinstate`, headers })
    const afterReinstate = await activate(test, revoked.id, { fingerprint: 'a' })
    assert.equal(afterReinstate.statusCode, 201, afterReinstate.body)

    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })
    const forSuspended = await activate(test, expiring.id, { fingerprint: 'b' })
    assert.equal(forSuspended.statusCode, 409, forSuspended.body)
    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/resume`, headers })

    test.clock.set('2030-01-03T00:00:00.000Z')
    const forExpired = await activate(test, expiring.id, { fingerprint: 'b' })
    assert.equal(forExpired.statusCode, 409, forExpired.body)
    assert.match(forExpired.json().detail, /expired/)
  })

  it('keeps activations when a license is revoked and refuses new ones after maxActivations is lowered', async (t) => {
    const test = await buildTestApp(t, database)
    const { app, headers, productId } = test
    const license = await createLicense(app, headers, { productId, maxActivations: 3 })
    for (const fingerprint of ['a', 'b', 'c']) {
      await activate(test, license.id, { fingerprint })
    }
    await app.inject({ method: 'POST', url: `/api/v0/licenses/${license.id}/revoke`, headers })
    await app.inject({ method: 'POST', url: `/api/v0/licenses/${license.id}/reinstate`, headers })
    const lowered = await app.inject({
      method: 'PATCH',
      url: `/api/v0/licenses/${license.id}`,
      headers,
      payload: { maxActivations: 1 },
    })
    assert.equal(lowered.statusCode, 200, lowered.body)

    const list = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${license.id}/activations`,
      headers,
    })
    const refused = await activate(test, license.id, { fingerprint: 'd' })
    const repeat = await activate(test, license.id, { fingerprint: 'a' })

    assert.equal(list.json().totalCount, 3, list.body)
    assert.equal(refused.statusCode, 409, refused.body)
    assert.equal(refused.json().activationCount, 3)
    assert.equal(repeat.statusCode, 200, repeat.body)
  })

  it('answers 400 for a bad fingerprint or oversized metadata, and 404 for another product’s license', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, { productId: test.productId })
    const other = await createProduct(test.app, test.headers)
    const foreignKey = await productKeyHeaders(test.app, test.headers, other)

    for (const body of [
      {},
      { fingerprint: '' },
      { fingerprint: 'x'.repeat(257) },
      { fingerprint: 'a', extra: 1 },
    ]) {
      const res = await activate(test, license.id, body)
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().code, 'validation_failed')
    }
    const big = await activate(test, license.id, { fingerprint: 'a', metadata: { blob: 'x'.repeat(4100) } })
    assert.equal(big.statusCode, 400, big.body)
    assert.equal(big.json().errors[0].pointer, '#/metadata')
    const foreign = await activate(test, license.id, { fingerprint: 'a' }, foreignKey)
    assert.equal(foreign.statusCode, 404, foreign.body)
    assert.equal(foreign.json().code, 'license_not_found')
  })
})
