import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { it } from 'node:test'
import { promisify } from 'node:util'
import { LicenseTokenError, validateLicenseToken } from '@keyturn/client'
import { decodeJwt, decodeProtectedHeader } from 'jose'
import { buildTestApp, createProduct, productKeyHeaders, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'

const day = 24 * 60 * 60 * 1000

async function aLicense(test: TestApp, body: Record<string, unknown> = {}) {
  const res = await test.app.inject({
    method: 'POST',
    url: '/api/v0/licenses',
    headers: test.headers,
    payload: { productId: test.productId, ...body },
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

async function product(test: TestApp) {
  const res = await test.app.inject({
    method: 'GET',
    url: `/api/v0/products/${test.productId}`,
    headers: test.headers,
  })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

describeEachDatabase('POST /api/v0/licenses/:id/tokens', (database) => {
  it('issues an EdDSA license+jwt that the client library validates offline to the same payload', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test, { expirationDate: '2031-01-01T00:00:00.000Z' })
    const { publicKey, keyId } = await product(test)

    const res = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: test.headers,
      payload: { customPayload: { plan: 'pro', seats: 5 } },
    })

    assert.equal(res.statusCode, 201, res.body)
    const { token, payload, license: returned } = res.json()
    assert.deepEqual(returned, license)
    assert.deepEqual(payload, {
      licenseId: license.id,
      expirationDate: '2030-01-31T00:00:00.000Z', // 30 days, before the license's own expiry
      productId: test.productId,
      createdAt: '2030-01-01T00:00:00.000Z',
      customFields: { plan: 'pro', seats: 5 },
      entitlements: [],
    })
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'EdDSA', typ: 'license+jwt', kid: keyId })
    const claims = decodeJwt(token)
    assert.equal(claims.iss, 'keyturn')
    assert.equal(claims.sub, license.id)
    assert.equal(claims.aud, test.productId)
    assert.equal(claims.iat, Date.parse('2030-01-01T00:00:00.000Z') / 1000)
    assert.equal(claims.exp, Date.parse('2030-01-31T00:00:00.000Z') / 1000)
    assert.match(String(claims.jti), /^tok_/)

    const result = await validateLicenseToken({
      productId: test.productId,
      publicKey,
      token,
      now: test.clock.now(),
    })
    assert.deepEqual(result, {
      licenseId: payload.licenseId,
      expiresAt: payload.expirationDate,
      productId: payload.productId,
      customFields: payload.customFields,
      issuedAt: payload.createdAt,
      entitlements: [],
    })
  })

  it('answers 201 without a body and omits customFields', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)

    const res = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: test.headers,
    })

    assert.equal(res.statusCode, 201, res.body)
    assert.equal('customFields' in res.json().payload, false)
  })

  it('ends the token at the license expiration date when that comes before the lifetime', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test, { expirationDate: '2030-01-02T12:00:00.000Z' })

    const res = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: test.headers,
      payload: { ttl: 7 * 24 * 3600 },
    })

    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().payload.expirationDate, '2030-01-02T12:00:00.000Z')
    assert.equal(decodeJwt(res.json().token).exp, Date.parse('2030-01-02T12:00:00.000Z') / 1000)
  })

  it('honours ttl and refuses one outside 1 hour to 1 year with 400 validation_failed', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)
    const issue = (ttl: number) =>
      test.app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/tokens`,
        headers: test.headers,
        payload: { ttl },
      })

    const hour = await issue(3600)
    assert.equal(hour.json().payload.expirationDate, '2030-01-01T01:00:00.000Z', hour.body)
    for (const ttl of [3599, 365 * 24 * 3600 + 1, 0]) {
      const res = await issue(ttl)
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().code, 'validation_failed')
    }
  })

  it('keeps customPayload inside customFields, so it cannot override registered claims', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)
    const sneaky = {
      sub: 'lic_someoneElse',
      aud: 'prd_other',
      exp: 9_999_999_999,
      licenseId: 'lic_x',
      productId: 'prd_x',
    }

    const res = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: test.headers,
      payload: { customPayload: sneaky },
    })

    assert.equal(res.statusCode, 201, res.body)
    const claims = decodeJwt(res.json().token)
    assert.equal(claims.sub, license.id)
    assert.equal(claims.aud, test.productId)
    assert.equal(claims.licenseId, license.id)
    assert.deepEqual(claims.customFields, sneaky)
  })

  it('answers 400 validation_failed for a customPayload over 4 KiB, or one that is not an object', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)
    const issue = (customPayload: unknown) =>
      test.app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${license.id}/tokens`,
        headers: test.headers,
        payload: { customPayload },
      })

    const big = await issue({ blob: 'x'.repeat(4100) })
    assert.equal(big.statusCode, 400, big.body)
    assert.equal(big.json().code, 'validation_failed')
    assert.equal(big.json().errors[0].pointer, '#/customPayload')
    assert.match(big.json().detail, /4096 bytes/)
    const justUnder = await issue({ blob: 'x'.repeat(4080) })
    assert.equal(justUnder.statusCode, 201, justUnder.body)
    for (const notObject of [[1, 2], 'text', 3]) {
      const res = await issue(notObject)
      assert.equal(res.statusCode, 400, res.body)
    }
  })

  it('answers 409 license_not_active for a revoked license, an expired one and one of a suspended product', async (t) => {
    const test = await buildTestApp(t, database)
    const { app, headers } = test
    const revoked = await aLicense(test)
    await app.inject({ method: 'POST', url: `/api/v0/licenses/${revoked.id}/revoke`, headers })
    const expiring = await aLicense(test, { expirationDate: '2030-01-02T00:00:00.000Z' })
    const issue = (id: string) =>
      app.inject({ method: 'POST', url: `/api/v0/licenses/${id}/tokens`, headers })

    const forRevoked = await issue(revoked.id)
    assert.equal(forRevoked.statusCode, 409, forRevoked.body)
    assert.equal(forRevoked.json().code, 'license_not_active')
    assert.match(forRevoked.json().detail, /revoked/)

    test.clock.advance(2 * day)
    const forExpired = await issue(expiring.id)
    assert.equal(forExpired.statusCode, 409, forExpired.body)
    assert.match(forExpired.json().detail, /expired/)

    const active = await aLicense(test)
    await app.inject({ method: 'POST', url: `/api/v0/products/${test.productId}/suspend`, headers })
    const forSuspended = await issue(active.id)
    assert.equal(forSuspended.statusCode, 409, forSuspended.body)
    assert.match(forSuspended.json().detail, /suspended/)
  })

  it('answers 404 license_not_found for an unknown license and for another product’s license', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)
    const otherProduct = await createProduct(test.app, test.headers)
    const foreignKey = await productKeyHeaders(test.app, test.headers, otherProduct)

    const unknown = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses/lic_doesNotExist/tokens',
      headers: test.headers,
    })
    const foreign = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: foreignKey,
    })

    assert.equal(unknown.statusCode, 404, unknown.body)
    assert.equal(unknown.json().code, 'license_not_found')
    assert.equal(foreign.statusCode, 404, foreign.body)
    assert.equal(foreign.json().code, 'license_not_found')
  })

  it('issues tokens to a product key for its own licenses', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)
    const ownKey = await productKeyHeaders(test.app, test.headers, test.productId)

    const res = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: ownKey,
    })

    assert.equal(res.statusCode, 201, res.body)
  })

  it('makes tokens that a token from another product’s key cannot pass for', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)
    const otherProduct = await createProduct(test.app, test.headers)
    const other = await test.app.inject({
      method: 'GET',
      url: `/api/v0/products/${otherProduct}`,
      headers: test.headers,
    })
    const res = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: test.headers,
    })

    await assert.rejects(
      validateLicenseToken({
        productId: test.productId,
        publicKey: other.json().publicKey,
        token: res.json().token,
        now: test.clock.now(),
      }),
      (error: unknown) => error instanceof LicenseTokenError && error.code === 'invalid_signature',
    )
  })

  const python = '/usr/bin/python3'
  const hasPyJwt = existsSync(python)
  it('verifies with PyJWT (python3-jwt), using only the product public key PEM and aud = productId', {
    skip: hasPyJwt ? false : `${python} is not installed (CI installs python3-jwt)`,
  }, async (t) => {
    const test = await buildTestApp(t, database)
    const license = await aLicense(test)
    const { publicKey } = await product(test)
    const res = await test.app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/tokens`,
      headers: test.headers,
      payload: { customPayload: { plan: 'pro' } },
    })
    const script = [
      'import json, sys, jwt',
      'token, key, audience, now = sys.argv[1:5]',
      // PyJWT judges exp against the real clock; the test clock is in 2030, so exp is checked by leeway-free options off.
      "claims = jwt.decode(token, key, algorithms=['EdDSA'], audience=audience, issuer='keyturn', options={'verify_exp': False, 'verify_iat': False, 'verify_nbf': False})",
      'header = jwt.get_unverified_header(token)',
      'print(json.dumps({"claims": claims, "header": header}))',
    ].join('\n')

    const { stdout } = await promisify(execFile)(python, [
      '-c',
      script,
      res.json().token,
      publicKey,
      test.productId,
      test.clock.now().toISOString(),
    ]).catch((error: { stderr?: string }) => {
      if (String(error.stderr).includes('ModuleNotFoundError')) {
        t.skip('python3-jwt is not installed')
      }
      throw error
    })

    const { claims, header } = JSON.parse(stdout)
    assert.equal(header.alg, 'EdDSA')
    assert.equal(claims.licenseId, license.id)
    assert.equal(claims.aud, test.productId)
    assert.deepEqual(claims.customFields, { plan: 'pro' })

    const tampered = `${res.json().token.slice(0, -4)}AAAA`
    const refused = await promisify(execFile)(python, [
      '-c',
      script,
      tampered,
      publicKey,
      test.productId,
      'x',
    ]).then(
      () => false,
      () => true,
    )
    assert.equal(refused, true, 'PyJWT accepted a tampered token')
  })
})
