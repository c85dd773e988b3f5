import assert from 'node:assert/strict'
import { it } from 'node:test'
import { LicenseTokenError, validateLicenseToken } from '@keyturn/client'
import { buildTestApp, createProduct } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense } from '../../testing/licenses.js'

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
