import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LicenseId } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { buildTestApp, createProduct, productKeyHeaders, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import {
  type AuthHeaders,
  createLicense,
  expectInvalidField,
  expectProblem,
  getLicense,
} from '../../testing/licenses.js'

const later = '2030-02-01T00:00:00.000Z'

/** PATCHes any JSON value (an array too) as the body. */
function patch(app: App, headers: AuthHeaders, id: LicenseId, body: unknown) {
  return app.inject({
    method: 'PATCH',
    url: `/api/v0/licenses/${id}`,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  })
}

describeEachDatabase('PATCH /api/v0/licenses/:id', (database) => {
  it('changes only maxActivations when only maxActivations is given, and bumps updatedAt', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })

    clock.set(later)
    const res = await patch(app, headers, created.id, { maxActivations: 5 })

    assert.equal(res.statusCode, 200, res.body)
    const expected = {
      ...created,
      maxActivations: 5,
      updatedAt: later,
      statusDetails: { ...created.statusDetails, determinedAt: later },
    }
    assert.deepEqual(res.json(), expected)
    assert.deepEqual(await getLicense(app, headers, created.id), expected)
  })

  it('changes only expirationDate when only expirationDate is given', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId, maxActivations: 3 })

    clock.set(later)
    const res = await patch(app, headers, created.id, { expirationDate: '2032-01-01T01:00:00+01:00' })

    assert.equal(res.statusCode, 200, res.body)
    const expected = {
      ...created,
      expirationDate: '2032-01-01T00:00:00.000Z',
      updatedAt: later,
      statusDetails: { ...created.statusDetails, determinedAt: later },
    }
    assert.deepEqual(res.json(), expected)
    assert.deepEqual(await getLicense(app, headers, created.id), expected)
  })

  it('changes both fields at once', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    const res = await patch(app, headers, created.id, {
      maxActivations: 10,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().maxActivations, 10)
    assert.equal(res.json().expirationDate, '2031-01-01T00:00:00.000Z')
  })

  it('makes a license unlimited with maxActivations null and never-expiring with expirationDate null', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      maxActivations: 3,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })

    const res = await patch(app, headers, created.id, { maxActivations: null, expirationDate: null })

    assert.equal(res.statusCode, 200, res.body)
    const license = await getLicense(app, headers, created.id)
    assert.equal(license.maxActivations, null)
    assert.equal(license.expirationDate, null)
  })

  it('makes an expired license active again by moving its expirationDate into the future', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-01-15T00:00:00.000Z',
    })
    clock.set(later)
    assert.equal((await getLicense(app, headers, created.id)).status, 'expired')

    const res = await patch(app, headers, created.id, { expirationDate: '2030-03-01T00:00:00.000Z' })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().status, 'active')
    assert.equal(res.json().statusDetails.isExpired, false)
  })

  it('keeps a revoked license revoked', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    await app.inject({ method: 'POST', url: `/api/v0/licenses/${created.id}/revoke`, headers })

    const res = await patch(app, headers, created.id, { maxActivations: 2 })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().status, 'revoked')
    assert.equal(res.json().maxActivations, 2)
  })

  it('changes nothing, updatedAt included, for an empty body', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    clock.set(later)
    const res = await patch(app, headers, created.id, {})

    assert.equal(res.statusCode, 200, res.body)
    const unchanged = { ...created, statusDetails: { ...created.statusDetails, determinedAt: later } }
    assert.deepEqual(res.json(), unchanged)
    assert.deepEqual(await getLicense(app, headers, created.id), unchanged)
    assert.equal(res.json().updatedAt, testStart)
  })

  it('answers 400 at #/expirationDate for a date that is now or past, and changes nothing', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })

    clock.set(later)
    for (const expirationDate of [later, testStart]) {
      const res = await patch(app, headers, created.id, { maxActivations: 9, expirationDate })
      expectInvalidField(res, '#/expirationDate')
    }

    const license = await getLicense(app, headers, created.id)
    assert.equal(license.expirationDate, '2031-01-01T00:00:00.000Z')
    assert.equal(license.maxActivations, 1)
    assert.equal(license.updatedAt, testStart)
  })

  it('answers 400 at #/maxActivations for 0, -1, 1.5, too large, a string or false', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId, maxActivations: 4 })

    for (const maxActivations of [0, -1, 1.5, 1_000_001, 1e20, '5', false, '']) {
      const res = await patch(app, headers, created.id, { maxActivations })
      expectInvalidField(res, '#/maxActivations')
    }

    assert.equal((await getLicense(app, headers, created.id)).maxActivations, 4)
  })

  it('answers 400 at #/expirationDate for a value that is not a date-time, and keeps the date', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })

    for (const expirationDate of ['', 'soon', '2031-01-01', 0, false]) {
      const res = await patch(app, headers, created.id, { expirationDate })
      expectInvalidField(res, '#/expirationDate')
    }

    assert.equal((await getLicense(app, headers, created.id)).expirationDate, '2031-01-01T00:00:00.000Z')
  })

  it('answers 400 naming the field for an unknown or read-only field, and changes nothing', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    for (const field of ['status', 'key', 'productId', 'bogus']) {
      const res = await patch(app, headers, created.id, { maxActivations: 3, [field]: 'x' })
      const problem = expectInvalidField(res, `#/${field}`)
      assert.match(problem.detail, new RegExp(`unknown field "${field}"`))
    }

    assert.deepEqual(await getLicense(app, headers, created.id), created)
  })

  it('answers 400 when the body is not a JSON object', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    for (const body of [[{ maxActivations: 2 }], 'maxActivations=2', 2]) {
      expectProblem(await patch(app, headers, created.id, body), 400, 'validation_failed')
    }
    assert.deepEqual(await getLicense(app, headers, created.id), created)
  })

  it('answers 409 product_suspended when the product is suspended, changing nothing', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })

    const res = await patch(app, headers, created.id, { maxActivations: 5 })
    const empty = await patch(app, headers, created.id, {})

    expectProblem(res, 409, 'product_suspended')
    assert.equal(empty.statusCode, 200, 'an empty change is no change')
    assert.deepEqual(await getLicense(app, headers, created.id), created)
  })

  it('answers 400 at #/id for a malformed id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'PATCH', url: '/api/v0/licenses/abc', headers, payload: {} })

    expectInvalidField(res, '#/id')
  })

  it('answers 404 license_not_found for an unknown id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await patch(app, headers, 'lic_doesNotExist000000000', { maxActivations: 2 })

    expectProblem(res, 404, 'license_not_found')
  })

  it("lets a product key update its own product's licenses, and answers 404 for another's", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const own = await createLicense(app, headers, { productId })
    const foreign = await createLicense(app, headers, { productId: other })
    const productHeaders = await productKeyHeaders(app, headers, productId)

    const updated = await patch(app, productHeaders, own.id, { maxActivations: 50 })
    const refused = await patch(app, productHeaders, foreign.id, { maxActivations: 50 })

    assert.equal(updated.statusCode, 200, updated.body)
    assert.equal(updated.json().maxActivations, 50)
    expectProblem(refused, 404, 'license_not_found')
    assert.deepEqual(await getLicense(app, headers, foreign.id), foreign)
  })
})
