import assert from 'node:assert/strict'
import { it } from 'node:test'
import { validateLicenseToken, verifyLicenseFile } from '@keyturn/client'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField } from '../../testing/licenses.js'
import { call } from '../../testing/vendors.js'

const day = 86_400

describeEachDatabase('the check-in policy', (database) => {
  it('puts checkInBy (now + interval, read live) and gracePeriod on valid answers, tokens and files', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Weekly check-in',
      checkInInterval: 7 * day,
      gracePeriod: 3 * day,
    })
    assert.deepEqual([policy.checkInInterval, policy.gracePeriod], [7 * day, 3 * day])
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    const product = await call(app, headers, 'GET', `/products/${productId}`, 200)
    const after = (seconds: number) => new Date(clock.now().getTime() + seconds * 1000).toISOString()
    const validate = () =>
      call(app, headers, 'POST', '/licenses/validate', 200, { key: license.key, productId })

    clock.advance(3_600_000)
    const answer = await validate()
    assert.equal(answer.checkInBy, after(7 * day), 'the moment of this validation plus the interval')
    assert.equal(answer.gracePeriod, 3 * day)

    const issued = await call(app, headers, 'POST', `/licenses/${license.id}/tokens`, 201, {})
    assert.deepEqual([issued.payload.checkInBy, issued.payload.gracePeriod], [after(7 * day), 3 * day])
    const claims = await validateLicenseToken({
      token: issued.token,
      productId,
      publicKey: product.publicKey,
      now: clock.now(),
    })
    assert.deepEqual([claims.checkInBy, claims.gracePeriod], [after(7 * day), 3 * day])
    const made = await call(app, headers, 'POST', `/licenses/${license.id}/license-file`, 201, {})
    const file = await verifyLicenseFile(made.licenseFile, {
      productId,
      publicKey: product.publicKey,
      now: clock.now(),
    })
    assert.deepEqual([file.checkInBy, file.gracePeriod], [after(7 * day), 3 * day])

    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, {
      checkInInterval: day,
      gracePeriod: null,
    })
    const changed = await validate()
    assert.equal(changed.checkInBy, after(day), 'read live from the policy')
    assert.equal('gracePeriod' in changed, false, 'absent when the policy sets none')

    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, { checkInInterval: null })
    const none = await validate()
    assert.equal('checkInBy' in none, false, 'no check-in: the field is absent')

    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, { checkInInterval: day })
    await call(app, headers, 'POST', `/licenses/${license.id}/revoke`, 200, {})
    const revoked = await validate()
    assert.equal(revoked.isValid, false)
    assert.equal('checkInBy' in revoked, false, 'an invalid answer carries no deadline')
  })

  it('gives a license without a policy no check-in, and refuses intervals out of range', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const plain = await call(app, headers, 'POST', '/licenses', 201, { productId })
    const answer = await call(app, headers, 'POST', '/licenses/validate', 200, { key: plain.key, productId })
    assert.equal(answer.isValid, true)
    assert.equal('checkInBy' in answer, false)
    assert.equal('gracePeriod' in answer, false)
    const defaults = await call(app, headers, 'POST', '/policies', 201, { productId, name: 'Defaults' })
    assert.deepEqual([defaults.checkInInterval, defaults.gracePeriod], [null, null])
    for (const [field, value] of [
      ['checkInInterval', 59],
      ['gracePeriod', -1],
    ] as const) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/policies',
        headers,
        payload: { productId, name: 'Bad', [field]: value },
      })
      expectInvalidField(res, `#/${field}`)
    }
  })
})
