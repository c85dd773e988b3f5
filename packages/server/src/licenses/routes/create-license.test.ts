import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, createProduct, productKeyHeaders, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { listEvents } from '../../testing/events.js'
import {
  createLicense,
  expectInvalidField,
  expectProblem,
  getLicense,
  licenseIdFormat,
  licenseKeyFormat,
  listLicenses,
} from '../../testing/licenses.js'

const url = '/api/v0/licenses'

describeEachDatabase('POST /api/v0/licenses', (database) => {
  it('creates an active license with one activation and no expiration by default', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'POST', url, headers, payload: { productId } })

    assert.equal(res.statusCode, 201, res.body)
    const { id, key, ...rest } = res.json()
    assert.match(id, licenseIdFormat)
    assert.match(key, licenseKeyFormat)
    assert.deepEqual(rest, {
      object: 'License',
      maxActivations: 1,
      status: 'active',
      expirationDate: null,
      createdAt: testStart,
      updatedAt: testStart,
      productId,
      statusDetails: { isRevoked: false, isExpired: false, determinedAt: testStart },
      activationCount: 0,
      heartbeatTtl: null,
      maxUses: null,
      uses: 0,
      usesResetAt: null,
      customerId: null,
      policyId: null,
      entitlements: [],
      metadata: {},
      externalId: null,
    })
  })

  it('stores the license it answers with', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const created = await createLicense(app, headers, {
      productId,
      maxActivations: 3,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })

    assert.deepEqual(await getLicense(app, headers, created.id), created)
  })

  it('generates a different key in the documented format for every license', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const keys = []
    for (let i = 0; i < 10; i++) {
      keys.push((await createLicense(app, headers, { productId })).key)
    }

    for (const key of keys) {
      assert.match(key, licenseKeyFormat)
    }
    assert.equal(new Set(keys).size, keys.length)
  })

  it('creates an unlimited license when maxActivations is null', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const created = await createLicense(app, headers, { productId, maxActivations: null })

    assert.equal(created.maxActivations, null)
    assert.equal((await getLicense(app, headers, created.id)).maxActivations, null)
  })

  it('keeps an explicit maxActivations from 1 to 1,000,000', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const maxActivations of [1, 5, 1_000_000]) {
      const created = await createLicense(app, headers, { productId, maxActivations })
      assert.equal(created.maxActivations, maxActivations)
      assert.equal((await getLicense(app, headers, created.id)).maxActivations, maxActivations)
    }
  })

  it('stores a future expirationDate in UTC with milliseconds', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2031-06-01T12:00:00+02:00',
    })

    assert.equal(created.expirationDate, '2031-06-01T10:00:00.000Z')
    assert.equal(created.status, 'active')
    assert.equal((await getLicense(app, headers, created.id)).expirationDate, '2031-06-01T10:00:00.000Z')
  })

  it('answers 400 validation_failed at #/expirationDate when expirationDate is now or past', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const expirationDate of [testStart, '2029-12-31T23:59:59.999Z', '2000-01-01T00:00:00Z']) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { productId, expirationDate } })
      const problem = expectInvalidField(res, '#/expirationDate')
      assert.match(problem.detail, /future/)
    }
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers 400 at #/expirationDate for a date past the year 9999, and lists still work', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    // A valid date-time that is in the year 10000 in UTC.
    for (const expirationDate of ['9999-12-31T23:59:59-01:00', '9999-12-31T23:59:59.999Z']) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { productId, expirationDate } })
      expectInvalidField(res, '#/expirationDate')
    }
    const latest = await createLicense(app, headers, {
      productId,
      expirationDate: '9999-12-31T23:59:59.998Z',
    })

    const list = await listLicenses(app, headers, 'sort=expirationDate:asc')
    assert.deepEqual(
      list.data.map((license) => license.id),
      [latest.id],
    )
  })

  it('answers 400 at #/expirationDate when it is not a readable ISO 8601 date-time with a zone', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const expirationDate of [
      'tomorrow',
      '2031-01-01',
      '2031-01-01T00:00:00',
      '2031-02-30T00:00:00Z',
      20310101,
    ]) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { productId, expirationDate } })
      expectInvalidField(res, '#/expirationDate')
    }
  })

  it('answers 400 at #/maxActivations for 0, -1, 1.5, 1,000,001 and huge numbers', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const maxActivations of [0, -1, 1.5, 1_000_001, 2 ** 31, 1e20]) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { productId, maxActivations } })
      expectInvalidField(res, '#/maxActivations')
    }
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers 400 at #/maxActivations when it is not a JSON integer or null', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const maxActivations of ['three', '3', true, {}, [5]]) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { productId, maxActivations } })
      expectInvalidField(res, '#/maxActivations')
    }
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers 400 rather than creating an unlimited license for maxActivations 0, false or ""', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    // Ajv's type coercion would turn each of these into null (unlimited).
    for (const maxActivations of [0, false, '', '0']) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { productId, maxActivations } })
      const problem = expectInvalidField(res, '#/maxActivations')
      assert.match(problem.detail, /maxActivations must be an integer from 1 to 1000000 or null; got/)
    }
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers 400 rather than creating a license that never expires for expirationDate ""', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const expirationDate of ['', false, 0, [null]]) {
      const res = await app.inject({ method: 'POST', url, headers, payload: { productId, expirationDate } })
      expectInvalidField(res, '#/expirationDate')
    }
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers 400 naming the field when the body has an unknown field', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'POST', url, headers, payload: { productId, status: 'revoked' } })

    const problem = expectInvalidField(res, '#/status')
    assert.match(problem.detail, /unknown field "status"/)
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers 400 at #/productId when productId is missing, malformed or not a string', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const payload of [{}, { productId: 'abc' }, { productId: 'lic_abc' }, { productId: 42 }]) {
      const res = await app.inject({ method: 'POST', url, headers, payload })
      expectInvalidField(res, '#/productId')
    }
  })

  it('answers 400 when the body is not a JSON object', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const array = await app.inject({ method: 'POST', url, headers, payload: [{ productId }] })
    expectProblem(array, 400, 'validation_failed')

    const broken = await app.inject({
      method: 'POST',
      url,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"productId":',
    })
    expectProblem(broken, 400, 'bad_request')
  })

  it('answers 404 product_not_found for an unknown product', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: { productId: 'prd_doesNotExist0000000000' },
    })

    const problem = expectProblem(res, 404, 'product_not_found')
    assert.equal(problem.errors?.[0]?.pointer, '#/productId')
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers 409 product_suspended for a suspended product, creating nothing', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/suspend`, headers })

    const res = await app.inject({ method: 'POST', url, headers, payload: { productId } })

    const problem = expectProblem(res, 409, 'product_suspended')
    assert.equal(
      problem.detail,
      `Product ${productId} is suspended; no license is created for it. Resume it first.`,
    )
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('answers each create of a burst on its own, one refused among them (grouped on PostgreSQL)', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const suspended = await createProduct(app, headers)
    await app.inject({ method: 'POST', url: `/api/v0/products/${suspended}/suspend`, headers })
    const payloads = Array.from({ length: 8 }, (_, n) => ({
      productId: n === 3 ? suspended : productId,
      metadata: { n: String(n) },
    }))

    const answers = await Promise.all(
      payloads.map((payload) => app.inject({ method: 'POST', url, headers, payload })),
    )

    assert.deepEqual(
      answers.map((res) => res.statusCode),
      [201, 201, 201, 409, 201, 201, 201, 201],
    )
    expectProblem(answers[3] as (typeof answers)[number], 409, 'product_suspended')
    const created = answers.filter((res) => res.statusCode === 201).map((res) => res.json())
    assert.deepEqual(
      created.map((license) => license.metadata.n),
      ['0', '1', '2', '4', '5', '6', '7'],
    )
    for (const license of created) {
      assert.deepEqual(await getLicense(app, headers, license.id), license)
    }
    const events = await listEvents(app, headers, 'filter=type:eq:license.created&limit=100')
    assert.deepEqual(events.map((event) => event.data.id).sort(), created.map((license) => license.id).sort())
  })

  it("creates a license for a product key's own product", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productHeaders = await productKeyHeaders(app, headers, productId)

    const created = await createLicense(app, productHeaders, { productId })

    assert.equal(created.productId, productId)
  })

  it('answers 403 forbidden when a product key creates a license for another product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const productHeaders = await productKeyHeaders(app, headers, productId)

    const res = await app.inject({
      method: 'POST',
      url,
      headers: productHeaders,
      payload: { productId: other },
    })

    expectProblem(res, 403, 'forbidden')
    assert.equal((await listLicenses(app, headers)).totalCount, 0)
  })

  it('is served under /v0 as well', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'POST', url: '/v0/licenses', headers, payload: { productId } })

    assert.equal(res.statusCode, 201, res.body)
    assert.equal((await getLicense(app, headers, res.json().id)).productId, productId)
  })
})
