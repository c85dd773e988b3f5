import assert from 'node:assert/strict'
import { it } from 'node:test'
import { LicenseFileError, verifyLicenseFile } from '@keyturn/client'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense } from '../../testing/licenses.js'
import { assertProblem } from '../../testing/problems.js'

describeEachDatabase(
  'license files: POST /licenses/:id/license-file, /activations/:id/license-file, /licenses/license-file',
  (database) => {
    it('issues a license file that verifies offline; no one-year cap, null for no expiry, never past the license', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const license = await createLicense(app, headers, { productId })
      const product = (
        await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
      ).json()
      const now = test.clock.now()

      const res = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/license-file`,
        headers,
        payload: { ttl: null },
      })
      assert.equal(res.statusCode, 201, res.body)
      const body = res.json()
      assert.equal(body.expiresAt, null)
      assert.equal(body.license.id, license.id)
      const result = await verifyLicenseFile(body.licenseFile, {
        productId,
        publicKey: product.publicKey,
        now,
      })
      assert.equal(result.licenseId, license.id)
      assert.equal(result.expiresAt, null)
      assert.equal(result.license.status, 'active')

      const tenYears = 10 * 365 * 86_400
      const long = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/license-file`,
        headers,
        payload: { ttl: tenYears },
      })
      assert.equal(long.json().expiresAt, new Date(now.getTime() + tenYears * 1000).toISOString())

      const expiring = await createLicense(app, headers, {
        productId,
        expirationDate: '2030-03-01T00:00:00.000Z',
      })
      const capped = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${expiring.id}/license-file`,
        headers,
        payload: {},
      })
      assert.equal(capped.json().expiresAt, '2030-03-01T00:00:00.000Z')

      // Each issue is in the audit log, without the file.
      const events = await app.inject({
        method: 'GET',
        url: `/api/v0/events?filter=${encodeURIComponent(`type:eq:license.file_issued,licenseId:eq:${license.id}`)}`,
        headers,
      })
      assert.equal(events.json().data.length, 2, events.body)
      assert.doesNotMatch(events.body, /BEGIN KEYTURN/)

      assertProblem(
        await app.inject({
          method: 'POST',
          url: `/api/v0/licenses/${license.id}/license-file`,
          headers,
          payload: { ttl: 'forever' },
        }),
        400,
        'validation_failed',
      )
    })

    it('issues an encrypted machine file for an activation, readable only with the key on that machine', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const license = await createLicense(app, headers, { productId })
      const activation = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/activate',
        headers,
        payload: { key: license.key, productId, fingerprint: 'machine-a' },
      })
      assert.equal(activation.statusCode, 201, activation.body)
      const product = (
        await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
      ).json()
      const res = await app.inject({
        method: 'POST',
        url: `/api/v0/activations/${activation.json().id}/license-file`,
        headers,
        payload: { encrypt: true },
      })
      assert.equal(res.statusCode, 201, res.body)
      const options = {
        productId,
        publicKey: product.publicKey,
        now: test.clock.now(),
        licenseKey: license.key,
      }
      const result = await verifyLicenseFile(res.json().licenseFile, { ...options, fingerprint: 'machine-a' })
      assert.equal(result.activationId, activation.json().id)
      assert.equal(result.encrypted, true)
      await assert.rejects(
        verifyLicenseFile(res.json().licenseFile, { ...options, fingerprint: 'machine-b' }),
        (error: unknown) => error instanceof LicenseFileError && error.code === 'decryption_failed',
      )
      assertProblem(
        await app.inject({
          method: 'POST',
          url: '/api/v0/activations/act_none/license-file',
          headers,
          payload: {},
        }),
        404,
        'activation_not_found',
      )
      // Another product's key sees neither the activation nor the license.
      const otherProductId = await createProduct(app, headers)
      assertProblem(
        await app.inject({
          method: 'POST',
          url: `/api/v0/activations/${activation.json().id}/license-file`,
          headers: await productKeyHeaders(app, headers, otherProductId),
          payload: {},
        }),
        404,
        'activation_not_found',
      )
    })

    it('by key: a client key gets at most clientTokenTtl, and a machine file only for an activated machine', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const license = await createLicense(app, headers, { productId })
      const clientKey = await app.inject({
        method: 'POST',
        url: '/api/v0/api-keys',
        headers,
        payload: { name: 'app', role: 'client', productId },
      })
      assert.equal(clientKey.statusCode, 201, clientKey.body)
      const client = { authorization: `Bearer ${clientKey.json().secret}` }
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/license-file',
        headers: client,
        payload: { key: license.key, productId, ttl: null },
      })
      assert.equal(res.statusCode, 201, res.body)
      const product = (
        await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
      ).json()
      assert.equal(
        res.json().expiresAt,
        new Date(test.clock.now().getTime() + product.clientTokenTtl * 1000).toISOString(),
      )
      assertProblem(
        await app.inject({
          method: 'POST',
          url: '/api/v0/licenses/license-file',
          headers: client,
          payload: { key: license.key, productId, fingerprint: 'never-activated' },
        }),
        404,
        'activation_not_found',
      )
    })
  },
)
