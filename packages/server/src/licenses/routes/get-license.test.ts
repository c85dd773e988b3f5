import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense, expectInvalidField, expectProblem, getLicense } from '../../testing/licenses.js'

describeEachDatabase('GET /api/v0/licenses/:id', (database) => {
  it('returns the license as created', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      maxActivations: 7,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })

    const res = await app.inject({ method: 'GET', url: `/api/v0/licenses/${created.id}`, headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), created)
  })

  it('reports determinedAt as the time of the request', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    clock.set('2030-05-06T07:08:09.010Z')
    const license = await getLicense(app, headers, created.id)

    assert.equal(license.statusDetails.determinedAt, '2030-05-06T07:08:09.010Z')
    assert.equal(license.updatedAt, testStart)
  })

  it('shows a license as expired once the clock reaches its expirationDate, without any update', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const expirationDate = '2030-06-01T00:00:00.000Z'
    const created = await createLicense(app, headers, { productId, expirationDate })

    clock.set('2030-05-31T23:59:59.999Z')
    const before = await getLicense(app, headers, created.id)
    clock.set(expirationDate)
    const at = await getLicense(app, headers, created.id)
    clock.set('2031-01-01T00:00:00.000Z')
    const after = await getLicense(app, headers, created.id)

    assert.equal(before.status, 'active')
    assert.deepEqual(before.statusDetails, {
      isRevoked: false,
      isExpired: false,
      determinedAt: '2030-05-31T23:59:59.999Z',
    })
    assert.equal(at.status, 'expired')
    assert.deepEqual(at.statusDetails, { isRevoked: false, isExpired: true, determinedAt: expirationDate })
    assert.equal(after.status, 'expired')
    assert.deepEqual(after.statusDetails, {
      isRevoked: false,
      isExpired: true,
      determinedAt: '2031-01-01T00:00:00.000Z',
    })
    assert.equal(after.updatedAt, testStart)
  })

  it('shows a revoked license that has also expired as revoked, with both flags set', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-06-01T00:00:00.000Z',
    })
    const revoke = await app.inject({ method: 'POST', url: `/api/v0/licenses/${created.id}/revoke`, headers })
    assert.equal(revoke.statusCode, 200, revoke.body)

    clock.set('2030-07-01T00:00:00.000Z')
    const license = await getLicense(app, headers, created.id)

    assert.equal(license.status, 'revoked')
    assert.deepEqual(license.statusDetails, {
      isRevoked: true,
      isExpired: true,
      determinedAt: '2030-07-01T00:00:00.000Z',
    })
  })

  it('answers 400 validation_failed at #/id for a malformed id', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const id of ['abc', productId, 'LIC_abc', `lic_${'a'.repeat(61)}`]) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/licenses/${id}`, headers })
      expectInvalidField(res, '#/id')
    }
  })

  it('answers 404 license_not_found for an unknown id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const id of ['lic_doesNotExist000000000', 'lic_%00', "lic_x'%20OR%20'1'='1"]) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/licenses/${id}`, headers })
      expectProblem(res, 404, 'license_not_found')
    }
  })

  it("returns a product key its own product's licenses, and 404 license_not_found for another's", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const own = await createLicense(app, headers, { productId })
    const foreign = await createLicense(app, headers, { productId: other })
    const productHeaders = await productKeyHeaders(app, headers, productId)

    const res = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${foreign.id}`,
      headers: productHeaders,
    })

    assert.deepEqual(await getLicense(app, productHeaders, own.id), own)
    expectProblem(res, 404, 'license_not_found')
  })
})
