import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import { LicenseTokenError, validateLicenseToken } from '@keyturn/client'
import { decodeJwt } from 'jose'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense } from '../../testing/licenses.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase(
  'machine-bound tokens: POST /api/v0/licenses/tokens and fingerprint on /licenses/:id/tokens',
  (database) => {
    it('issues a token by key bound to an activated machine, which validates only with that fingerprint', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const license = await createLicense(app, headers, { productId, maxActivations: 2 })
      await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/activate',
        headers,
        payload: { key: license.key, productId, fingerprint: 'machine-a' },
      })
      const product = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })

      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/tokens',
        headers,
        payload: { key: license.key, productId, fingerprint: 'machine-a', customPayload: { plan: 'pro' } },
      })

      assert.equal(res.statusCode, 201, res.body)
      const { token, payload } = res.json()
      assert.equal(payload.fingerprint, 'machine-a')
      assert.equal(payload.licenseId, license.id)
      const options = { productId, publicKey: product.json().publicKey, token, now: test.clock.now() }
      const result = await validateLicenseToken({ ...options, fingerprint: 'machine-a' })
      assert.equal(result.fingerprint, 'machine-a')
      await assert.rejects(
        validateLicenseToken({ ...options, fingerprint: 'machine-b' }),
        (error: unknown) => error instanceof LicenseTokenError && error.code === 'fingerprint_mismatch',
      )
    })

    it('refuses to bind a token to a machine that is not activated, with 404 activation_not_found', async (t) => {
      const { app, headers, productId } = await buildTestApp(t, database)
      const license = await createLicense(app, headers, { productId })

      const byId = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/tokens`,
        headers,
        payload: { fingerprint: 'never-activated' },
      })
      const byKey = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/tokens',
        headers,
        payload: { key: license.key, productId, fingerprint: 'never-activated' },
      })

      assert.equal(byId.statusCode, 404, byId.body)
      assert.equal(byId.json().code, 'activation_not_found')
      assert.equal(byId.json().errors[0].pointer, '#/fingerprint')
      assert.equal(byKey.statusCode, 404, byKey.body)
    })

    it('rejects an unbound token when the application asks for its fingerprint', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const license = await createLicense(app, headers, { productId })
      const product = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
      const res = await app.inject({ method: 'POST', url: `/api/v0/licenses/${license.id}/tokens`, headers })

      await assert.rejects(
        validateLicenseToken({
          productId,
          publicKey: product.json().publicKey,
          token: res.json().token,
          now: test.clock.now(),
          fingerprint: 'machine-a',
        }),
        (error: unknown) => error instanceof LicenseTokenError && error.code === 'fingerprint_mismatch',
      )
    })

    it('answers 404 license_not_found for an unknown key or a key of another product, 409 for a revoked license', async (t) => {
      const { app, headers, productId } = await buildTestApp(t, database)
      const license = await createLicense(app, headers, { productId })
      const other = await createProduct(app, headers)
      const issue = (payload: Record<string, unknown>) =>
        app.inject({ method: 'POST', url: '/api/v0/licenses/tokens', headers, payload })

      const unknown = await issue({ key: 'AAAAA-AAAAA-AAAAA-AAAAA-AAAAA', productId })
      const wrongProduct = await issue({ key: license.key, productId: other })
      await app.inject({ method: 'POST', url: `/api/v0/licenses/${license.id}/revoke`, headers })
      const revoked = await issue({ key: license.key, productId })

      assert.equal(unknown.statusCode, 404, unknown.body)
      assert.equal(unknown.json().code, 'license_not_found')
      assert.equal(wrongProduct.statusCode, 404, wrongProduct.body)
      assert.equal(revoked.statusCode, 409, revoked.body)
      assert.equal(revoked.json().code, 'license_not_active')
    })
  },
)

describeEachDatabase('tokens a client key obtains: POST /api/v0/licenses/tokens', (database) => {
  const day = 24 * 60 * 60

  async function clientSetUp(t: TestContext) {
    const test = await buildTestApp(t, database)
    const { app, headers, productId } = test
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'shipped app', role: 'client', productId },
    })
    const client = { authorization: `Bearer ${created.json().secret}` }
    const license = await createLicense(app, headers, { productId })
    const issue = (as: { authorization: string }, options: Record<string, unknown> = {}) =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses/tokens',
        headers: as,
        payload: { key: license.key, productId, ...options },
      })
    return { ...test, client, license, issue }
  }

  const lifetime = (res: { json(): { token: string } }) => {
    const { iat, exp } = decodeJwt(res.json().token)
    return (exp ?? 0) - (iat ?? 0)
  }

  it('answers 403 forbidden naming customPayload when a client key sends one', async (t) => {
    const { client, issue } = await clientSetUp(t)

    const res = await issue(client, { customPayload: { plan: 'enterprise', seats: 100_000 } })

    const problem = assertProblem(res, 403, 'forbidden')
    assert.match(problem.detail, /client API key may not set customPayload/)
    assert.deepEqual(problem.errors, [
      { pointer: '#/customPayload', detail: 'not allowed with a client API key' },
    ])
  })

  it('caps the lifetime of a client key token at the product clientTokenTtl, 7 days by default', async (t) => {
    const { client, issue, app, headers, productId } = await clientSetUp(t)
    const product = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.equal(product.json().clientTokenTtl, 7 * day)

    const byDefault = await issue(client)
    const longer = await issue(client, { ttl: 365 * day })
    const shorter = await issue(client, { ttl: 3600 })

    assert.equal(byDefault.statusCode, 201, byDefault.body)
    assert.equal(lifetime(byDefault), 7 * day)
    assert.equal(byDefault.json().payload.expirationDate, '2030-01-08T00:00:00.000Z')
    assert.equal(lifetime(longer), 7 * day)
    assert.equal(lifetime(shorter), 3600)
  })

  it('follows a clientTokenTtl an admin sets, and leaves management keys their own lifetime and payload', async (t) => {
    const { client, issue, app, headers, productId } = await clientSetUp(t)

    const updated = await app.inject({
      method: 'PATCH',
      url: `/api/v0/products/${productId}`,
      headers,
      payload: { clientTokenTtl: day },
    })

    assert.equal(updated.statusCode, 200, updated.body)
    assert.equal(updated.json().clientTokenTtl, day)
    assert.equal(lifetime(await issue(client, { ttl: 30 * day })), day)
    const admin = await issue(headers, { customPayload: { plan: 'pro' } })
    assert.equal(admin.statusCode, 201, admin.body)
    assert.equal(lifetime(admin), 30 * day)
    assert.deepEqual(admin.json().payload.customFields, { plan: 'pro' })
    const product = await productKeyHeaders(app, headers, productId)
    assert.equal(lifetime(await issue(product, { ttl: 90 * day })), 90 * day)
  })

  it('lets only an admin key change clientTokenTtl, within 1 hour to 1 year', async (t) => {
    const { client, app, headers, productId } = await clientSetUp(t)
    const product = await productKeyHeaders(app, headers, productId)
    const patch = (as: { authorization: string }, clientTokenTtl: unknown) =>
      app.inject({
        method: 'PATCH',
        url: `/api/v0/products/${productId}`,
        headers: as,
        payload: { clientTokenTtl },
      })

    assertProblem(await patch(client, 365 * day), 403, 'forbidden')
    assertProblem(await patch(product, 365 * day), 403, 'forbidden')
    for (const bad of [3599, 365 * day + 1, 1.5, '3600', null]) {
      assertProblem(await patch(headers, bad), 400, 'validation_failed')
    }
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers,
      payload: { name: 'Short-lived', clientTokenTtl: 3600 },
    })
    assert.equal(created.statusCode, 201, created.body)
    assert.equal(created.json().clientTokenTtl, 3600)
    const unchanged = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    assert.equal(unchanged.json().clientTokenTtl, 7 * day)
  })
})
