import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LicenseId, ProductId } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { buildTestApp, createProduct, productKeyHeaders, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import {
  type AuthHeaders,
  aLicense,
  createLicense,
  expectInvalidField,
  expectProblem,
  getLicense,
  insertLicenses,
  validateLicense,
} from '../../testing/licenses.js'

const url = '/api/v0/licenses/validate'

async function post(app: App, headers: AuthHeaders, path: string): Promise<void> {
  const res = await app.inject({ method: 'POST', url: `/api/v0${path}`, headers })
  assert.equal(res.statusCode, 200, res.body)
}
const revoke = (app: App, headers: AuthHeaders, id: LicenseId) => post(app, headers, `/licenses/${id}/revoke`)
const reinstate = (app: App, headers: AuthHeaders, id: LicenseId) =>
  post(app, headers, `/licenses/${id}/reinstate`)
const suspend = (app: App, headers: AuthHeaders, id: ProductId) =>
  post(app, headers, `/products/${id}/suspend`)
const resume = (app: App, headers: AuthHeaders, id: ProductId) => post(app, headers, `/products/${id}/resume`)

describeEachDatabase('POST /api/v0/licenses/validate', (database) => {
  it('answers isValid true and reason null for an active license, with the license', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    const res = await app.inject({ method: 'POST', url, headers, payload: { key: created.key, productId } })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { isValid: true, reason: null, timestamp: testStart, license: created })
  })

  it('reports the time of validation as timestamp and determinedAt', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    clock.set('2030-04-05T06:07:08.009Z')
    const result = await validateLicense(app, headers, { key: created.key, productId })

    assert.equal(result.timestamp, '2030-04-05T06:07:08.009Z')
    assert.equal(result.license.statusDetails.determinedAt, '2030-04-05T06:07:08.009Z')
  })

  it('validates a key typed in lowercase, with surrounding spaces, or with O, I and L for 0 and 1', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const license = aLicense({ productId, key: '01ABC-DEFGH-JKMNP-QRSTV-WXYZ1' })
    await insertLicenses(connection, [license])

    for (const key of [
      '01abc-defgh-jkmnp-qrstv-wxyz1',
      '  01ABC-DEFGH-JKMNP-QRSTV-WXYZ1 ',
      'OIABC-DEFGH-JKMNP-QRSTV-WXYZL',
      'olabc-defgh-jkmnp-qrstv-wxyzi',
    ]) {
      const result = await validateLicense(app, headers, { key, productId })
      assert.equal(result.isValid, true, key)
      assert.equal(result.license.id, license.id, key)
      assert.equal(result.license.key, license.key, key)
    }
  })

  it('answers isValid false, reason revoked, for a revoked license', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    await revoke(app, headers, created.id)

    const result = await validateLicense(app, headers, { key: created.key, productId })

    assert.deepEqual([result.isValid, result.reason], [false, 'revoked'])
    assert.equal(result.license.status, 'revoked')
  })

  it('answers isValid false, reason expired, once the clock reaches the expiration date', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const expirationDate = '2030-06-01T00:00:00.000Z'
    const created = await createLicense(app, headers, { productId, expirationDate })

    clock.set('2030-05-31T23:59:59.999Z')
    const before = await validateLicense(app, headers, { key: created.key, productId })
    clock.set(expirationDate)
    const at = await validateLicense(app, headers, { key: created.key, productId })

    assert.deepEqual([before.isValid, before.reason], [true, null])
    assert.deepEqual([at.isValid, at.reason], [false, 'expired'])
    assert.equal(at.license.status, 'expired')
  })

  it('answers isValid false, reason suspended, while the product is suspended, and valid after resume', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    await suspend(app, headers, productId)
    const suspended = await validateLicense(app, headers, { key: created.key, productId })
    await resume(app, headers, productId)
    const resumed = await validateLicense(app, headers, { key: created.key, productId })

    assert.deepEqual([suspended.isValid, suspended.reason], [false, 'suspended'])
    assert.equal(suspended.license.status, 'active') // suspended is never a license status
    assert.deepEqual([resumed.isValid, resumed.reason], [true, null])
  })

  it('gives revoked precedence over expired and suspended, and expired over suspended', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const revokedAndExpired = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-01-15T00:00:00.000Z',
    })
    const expired = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-01-15T00:00:00.000Z',
    })
    await revoke(app, headers, revokedAndExpired.id)
    await suspend(app, headers, productId)

    clock.set('2030-02-01T00:00:00.000Z')
    const first = await validateLicense(app, headers, { key: revokedAndExpired.key, productId })
    const second = await validateLicense(app, headers, { key: expired.key, productId })

    assert.deepEqual([first.isValid, first.reason], [false, 'revoked'])
    assert.deepEqual(first.license.statusDetails, {
      isRevoked: true,
      isExpired: true,
      determinedAt: '2030-02-01T00:00:00.000Z',
    })
    assert.deepEqual([second.isValid, second.reason], [false, 'expired'])
  })

  it('answers isValid true again after a revoked license is reinstated', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    await revoke(app, headers, created.id)

    await reinstate(app, headers, created.id)

    const result = await validateLicense(app, headers, { key: created.key, productId })
    assert.deepEqual([result.isValid, result.reason], [true, null])
  })

  it('changes nothing about the license', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    clock.set('2030-02-01T00:00:00.000Z')
    await validateLicense(app, headers, { key: created.key, productId })

    assert.equal((await getLicense(app, headers, created.id)).updatedAt, testStart)
  })

  it('answers 404 license_not_found for an unknown key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    await createLicense(app, headers, { productId })

    for (const key of ['AAAAA-AAAAA-AAAAA-AAAAA-AAAAA', 'not a key', "' OR 1=1 --"]) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { key, productId } })
      expectProblem(res, 404, 'license_not_found')
    }
    // U+0000 is refused in every text field before any lookup (docs/decisions/0008-hostile-input.md).
    const nul = await app.inject({ method: 'POST', url, headers, payload: { key: 'a\u0000b', productId } })
    expectProblem(nul, 400, 'validation_failed')
  })

  it('answers 404 license_not_found for a key of another product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const created = await createLicense(app, headers, { productId: other })

    const res = await app.inject({ method: 'POST', url, headers, payload: { key: created.key, productId } })

    expectProblem(res, 404, 'license_not_found')
  })

  it('answers each validation of a burst on its own (one statement for all on PostgreSQL)', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const active = await createLicense(app, headers, { productId })
    const revoked = await createLicense(app, headers, { productId })
    await revoke(app, headers, revoked.id)
    const foreign = await createLicense(app, headers, { productId: await createProduct(app, headers) })
    const keys = [
      active.key,
      revoked.key,
      'AAAAA-AAAAA-AAAAA-AAAAA-AAAAA',
      foreign.key,
      active.key,
      'not a key',
    ]

    const answers = await Promise.all(
      keys.map((key) => app.inject({ method: 'POST', url, headers, payload: { key, productId } })),
    )

    assert.deepEqual(
      answers.map((res) => [res.statusCode, res.json().license?.id ?? res.json().code, res.json().reason]),
      [
        [200, active.id, null],
        [200, revoked.id, 'revoked'],
        [404, 'license_not_found', undefined],
        [404, 'license_not_found', undefined],
        [200, active.id, null],
        [404, 'license_not_found', undefined],
      ],
    )
  })

  it('answers 404 license_not_found for an unknown product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    const res = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: { key: created.key, productId: 'prd_doesNotExist0000000000' },
    })

    expectProblem(res, 404, 'license_not_found')
  })

  it("validates with a product key for its own product, and answers 404 for another product's key", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const own = await createLicense(app, headers, { productId })
    const foreign = await createLicense(app, headers, { productId: other })
    const productHeaders = await productKeyHeaders(app, headers, productId)

    const result = await validateLicense(app, productHeaders, { key: own.key, productId })
    const res = await app.inject({
      method: 'POST',
      url,
      headers: productHeaders,
      payload: { key: foreign.key, productId: other },
    })

    assert.equal(result.isValid, true)
    expectProblem(res, 404, 'license_not_found')
  })

  it('answers 400 naming the field for a missing key or productId, or an unknown field', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    expectInvalidField(await app.inject({ method: 'POST', url, headers, payload: { productId } }), '#/key')
    expectInvalidField(
      await app.inject({ method: 'POST', url, headers, payload: { key: created.key } }),
      '#/productId',
    )
    const extra = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: { key: created.key, productId, licenseId: created.id },
    })
    assert.match(expectInvalidField(extra, '#/licenseId').detail, /unknown field "licenseId"/)
  })

  it('answers 400 for a key that is empty, too long or not a string', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const key of ['', 'A'.repeat(257), 12345, null]) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { key, productId } })
      expectInvalidField(res, '#/key')
    }
  })
})
