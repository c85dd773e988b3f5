import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { createLicense } from '../testing/licenses.js'

describeEachDatabase('POST /api/v0/licenses/validate with a fingerprint', (database) => {
  it('answers not_activated for a machine without a seat, valid once it is activated, and shows activationCount', async (t) => {
    const test = await buildTestApp(t, database)
    const { app, headers, productId } = test
    const license = await createLicense(app, headers, { productId, maxActivations: 2 })
    const validate = (fingerprint?: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers,
        payload: { key: license.key, productId, ...(fingerprint === undefined ? {} : { fingerprint }) },
      })

    const before = await validate('machine-a')
    await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/activate',
      headers,
      payload: { key: license.key, productId, fingerprint: 'machine-a' },
    })
    const after = await validate('machine-a')
    const without = await validate()

    assert.equal(before.statusCode, 200, before.body)
    assert.deepEqual([before.json().isValid, before.json().reason], [false, 'not_activated'])
    assert.deepEqual([after.json().isValid, after.json().reason], [true, null])
    assert.equal(after.json().license.activationCount, 1)
    assert.deepEqual([without.json().isValid, without.json().reason], [true, null])
  })

  it('gives revoked, expired and suspended precedence over not_activated', async (t) => {
    const test = await buildTestApp(t, database)
    const { app, headers, productId } = test
    const license = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-06-01T00:00:00.000Z',
    })
    const reason = async () => {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers,
        payload: { key: license.key, productId, fingerprint: 'never-activated' },
      })
      return res.json().reason
    }

    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })
    assert.equal(await reason(), 'suspended')
    test.clock.set('2030-07-01T00:00:00.000Z')
    assert.equal(await reason(), 'expired')
    await app.inject({ method: 'POST', url: `/api/v0/licenses/${license.id}/revoke`, headers })
    assert.equal(await reason(), 'revoked')
  })

  it('answers 400 for an empty or overlong fingerprint', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await createLicense(app, headers, { productId })

    for (const fingerprint of ['', 'x'.repeat(257)]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers,
        payload: { key: license.key, productId, fingerprint },
      })
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().errors[0].pointer, '#/fingerprint')
    }
  })
})
