import assert from 'node:assert/strict'
import { it } from 'node:test'
import { validateLicenseToken, verifyLicenseFile } from '@keyturn/client'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField } from '../../testing/licenses.js'
import { call } from '../../testing/vendors.js'

const day = 86_400
const year = 365 * day

describeEachDatabase('policies decide file lifetimes, long tokens and metadata in files', (database) => {
  it("gives files the policy's lifetime, read live, unless the request gives one; null never expires", async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Offline',
      licenseFileTtl: 90 * day,
    })
    assert.deepEqual(
      [policy.licenseFileTtl, policy.tokenTtlMax, policy.licenseFileMetadata],
      [90 * day, null, false],
    )
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    const fileOf = async (payload: Record<string, unknown> = {}) =>
      call(app, headers, 'POST', `/licenses/${license.id}/license-file`, 201, payload)
    const at = (seconds: number) => new Date(clock.now().getTime() + seconds * 1000).toISOString()

    assert.equal((await fileOf()).expiresAt, at(90 * day))
    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, { licenseFileTtl: null })
    assert.equal((await fileOf()).expiresAt, null, 'read live from the policy')
    assert.equal((await fileOf({ ttl: 7 * day })).expiresAt, at(7 * day), 'the request wins')

    const plain = await call(app, headers, 'POST', '/licenses', 201, { productId })
    const fromDefault = await call(app, headers, 'POST', `/licenses/${plain.id}/license-file`, 201, {})
    assert.equal(fromDefault.expiresAt, at(year), 'without a policy: a year')
    const defaults = await call(app, headers, 'POST', '/policies', 201, { productId, name: 'Defaults' })
    assert.equal(defaults.licenseFileTtl, year)
  })

  it('lets a token live past a year only where the policy allows it', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const longLived = await call(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Air-gapped',
      tokenTtlMax: 10 * year,
    })
    const offline = await call(app, headers, 'POST', '/licenses', 201, { productId, policyId: longLived.id })
    const plain = await call(app, headers, 'POST', '/licenses', 201, { productId })
    const product = await call(app, headers, 'GET', `/products/${productId}`, 200)

    const issued = await call(app, headers, 'POST', `/licenses/${offline.id}/tokens`, 201, { ttl: 5 * year })
    const claims = await validateLicenseToken({
      token: issued.token,
      productId,
      publicKey: product.publicKey,
      now: clock.now(),
    })
    assert.equal(claims.licenseId, offline.id)
    assert.equal(Date.parse(claims.expiresAt) - Date.parse(claims.issuedAt), 5 * year * 1000)

    for (const [license, ttl] of [
      [plain, 2 * year],
      [offline, 11 * year],
    ] as const) {
      const res = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/tokens`,
        headers,
        payload: { ttl },
      })
      expectInvalidField(res, '#/ttl')
    }
  })

  it("puts the license's metadata in files only when the policy opts in", async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const policy = await call(app, headers, 'POST', '/policies', 201, { productId, name: 'Plain' })
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      policyId: policy.id,
      metadata: { seats: 5, plan: 'pro' },
    })
    const product = await call(app, headers, 'GET', `/products/${productId}`, 200)
    const read = async () => {
      const made = await call(app, headers, 'POST', `/licenses/${license.id}/license-file`, 201, {})
      return (
        await verifyLicenseFile(made.licenseFile, {
          productId,
          publicKey: product.publicKey,
          now: clock.now(),
        })
      ).license
    }
    assert.equal((await read()).metadata, undefined)
    await call(app, headers, 'PATCH', `/policies/${policy.id}`, 200, { licenseFileMetadata: true })
    assert.deepEqual((await read()).metadata, { seats: 5, plan: 'pro' })
  })
})
