import assert from 'node:assert/strict'
import { it } from 'node:test'
import { maxDurationSeconds } from '@keyturn/protocol'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem } from '../../testing/licenses.js'
import { call, roleHeaders } from '../../testing/vendors.js'

const day = 86_400

describeEachDatabase('POST /api/v0/licenses/:id/renew', (database) => {
  it('extends from the current expiration date when renewed early, losing no paid time', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })

    clock.set('2030-01-20T00:00:00.000Z')
    const renewed = await call(app, headers, 'POST', `/licenses/${license.id}/renew`, 200, {
      duration: 30 * day,
    })

    assert.equal(renewed.expirationDate, '2030-03-03T00:00:00.000Z')
    assert.equal(renewed.updatedAt, '2030-01-20T00:00:00.000Z')
    assert.equal(renewed.status, 'active')
  })

  it('extends from now when renewed after it lapsed, making it active again', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })

    clock.set('2030-05-01T12:00:00.000Z')
    assert.equal((await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).status, 'expired')
    const renewed = await call(app, headers, 'POST', `/licenses/${license.id}/renew`, 200, {
      duration: 10 * day,
    })

    assert.equal(renewed.expirationDate, '2030-05-11T12:00:00.000Z')
    assert.equal(renewed.status, 'active')
  })

  it("uses the policy's duration by default, and answers 400 at #/duration when there is none", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Monthly',
      duration: 30 * day,
    })
    const fromPolicy = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    const plain = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })

    const renewed = await call(app, headers, 'POST', `/licenses/${fromPolicy.id}/renew`, 200)
    const refused = await app.inject({ method: 'POST', url: `/api/v0/licenses/${plain.id}/renew`, headers })

    assert.equal(fromPolicy.expirationDate, '2030-01-31T00:00:00.000Z')
    assert.equal(renewed.expirationDate, '2030-03-02T00:00:00.000Z')
    expectInvalidField(refused, '#/duration')
    expectInvalidField(
      await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${plain.id}/renew`,
        headers,
        payload: { duration: 60 },
      }),
      '#/duration',
    )
  })

  it('answers 409 license_does_not_expire for a license without an expiration date', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId })

    const res = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/renew`,
      headers,
      payload: { duration: day },
    })

    expectProblem(res, 409, 'license_does_not_expire')
    assert.equal(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).updatedAt,
      license.updatedAt,
    )
  })

  it('keeps a revoked license revoked while extending its date', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })
    await call(app, headers, 'POST', `/licenses/${license.id}/revoke`, 200)

    const renewed = await call(app, headers, 'POST', `/licenses/${license.id}/renew`, 200, { duration: day })

    assert.equal(renewed.status, 'revoked')
    assert.equal(renewed.expirationDate, '2030-02-02T00:00:00.000Z')
  })

  it('adds the time to what the first activation will start, for a license still waiting for it', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Trial',
      duration: 7 * day,
      expirationBasis: 'firstActivation',
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })

    const renewed = await call(app, headers, 'POST', `/licenses/${license.id}/renew`, 200)
    clock.set('2030-04-01T00:00:00.000Z')
    await call(app, headers, 'POST', `/licenses/${license.id}/activations`, 201, { fingerprint: 'm1' })

    assert.equal(renewed.expirationDate, null)
    assert.equal(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).expirationDate,
      '2030-04-15T00:00:00.000Z',
    )
  })

  it('holds up to 100 years for a license waiting for its first activation, and answers 400 at #/duration past that', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Seventy years',
      duration: 2_200_000_000, // past 32-bit seconds
      expirationBasis: 'firstActivation',
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })

    await call(app, headers, 'POST', `/licenses/${license.id}/renew`, 200, {
      duration: maxDurationSeconds - 2_200_000_000,
    })
    const refused = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/renew`,
      headers,
      payload: { duration: 3600 },
    })
    clock.set('2030-04-01T00:00:00.000Z')
    await call(app, headers, 'POST', `/licenses/${license.id}/activations`, 201, { fingerprint: 'm1' })

    assert.match(expectInvalidField(refused, '#/duration').detail, /100 years/)
    assert.equal(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).expirationDate,
      new Date(Date.parse('2030-04-01T00:00:00.000Z') + maxDurationSeconds * 1000).toISOString(),
    )
  })

  it('renews once when a request is retried with the same Idempotency-Key, and counts both of two renewals', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })
    const renew = () =>
      app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/renew`,
        headers: { ...headers, 'idempotency-key': 'renewal-order-42' },
        payload: { duration: day },
      })

    const first = await renew()
    const retried = await renew()
    assert.equal(retried.headers['idempotent-replayed'], 'true')
    assert.equal(retried.body, first.body)
    assert.equal(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).expirationDate,
      '2030-02-02T00:00:00.000Z',
    )

    await Promise.all(
      [1, 2].map(() => call(app, headers, 'POST', `/licenses/${license.id}/renew`, 200, { duration: day })),
    )
    assert.equal(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).expirationDate,
      '2030-02-04T00:00:00.000Z',
    )
  })

  it('counts every one of ten simultaneous renewals, each answered 200', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })

    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        app.inject({
          method: 'POST',
          url: `/api/v0/licenses/${license.id}/renew`,
          headers,
          payload: { duration: day },
        }),
      ),
    )

    assert.deepEqual(
      answers.map((res) => res.statusCode),
      Array(10).fill(200),
      answers.map((res) => res.body).join('\n'),
    )
    assert.equal(
      (await call(app, headers, 'GET', `/licenses/${license.id}`, 200)).expirationDate,
      '2030-02-11T00:00:00.000Z',
    )
  })

  it("lets a product key renew its own product's licenses only; a client key gets 403", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const foreign = await call(app, headers, 'POST', '/licenses', 201, {
      productId: other,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })
    const own = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })
    const productKey = await productKeyHeaders(app, headers, productId)
    const clientKey = await roleHeaders(app, headers, 'client', productId)
    const renew = (id: string, auth: { authorization: string }) =>
      app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${id}/renew`,
        headers: auth,
        payload: { duration: day },
      })

    assert.equal((await renew(own.id, productKey)).statusCode, 200)
    expectProblem(await renew(foreign.id, productKey), 404, 'license_not_found')
    expectProblem(await renew(own.id, clientKey), 403, 'forbidden')
  })
})
