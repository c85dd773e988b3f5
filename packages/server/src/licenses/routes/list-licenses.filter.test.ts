import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { App } from '../../http/app-types.js'
import { buildTestApp, createProduct } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import {
  type AuthHeaders,
  aLicense,
  aVarietyOfLicenses,
  expectInvalidField,
  expectProblem,
  ids,
  insertLicenses,
  listLicenses,
  numberedId,
} from '../../testing/licenses.js'

const afterAll = '2030-06-01T00:00:00.000Z'

/** Ids matching `filter`, in id order (the fixture's ids are numbered). */
async function matching(app: App, headers: AuthHeaders, filter: string): Promise<string[]> {
  const page = await listLicenses(app, headers, `filter=${encodeURIComponent(filter)}&limit=100`)
  assert.equal(page.totalCount, page.data.length, filter)
  return ids(page).sort()
}

const numbered = (...numbers: number[]) => numbers.map(numberedId)

/** Checks each `[filter, expected license numbers]` pair. */
async function expectMatches(app: App, headers: AuthHeaders, cases: [string, number[]][]): Promise<void> {
  for (const [filter, expected] of cases) {
    assert.deepEqual(await matching(app, headers, filter), numbered(...expected), filter)
  }
}

describeEachDatabase('GET /api/v0/licenses?filter=', (database) => {
  it('filters by expirationDate with every operator; ne also matches licenses that never expire', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    await expectMatches(app, headers, [
      ['expirationDate:eq:2030-03-01T00:00:00.000Z', [1, 2]],
      ['expirationDate:eq:2030-03-01T01:00:00+01:00', [1, 2]],
      ['expirationDate:eq:2030-03-01', [1, 2]],
      ['expirationDate:ne:2030-03-01T00:00:00Z', [0, 3, 4, 5, 6, 7, 8]],
      ['expirationDate:lt:2030-03-01T00:00:00Z', [5, 8]],
      ['expirationDate:lte:2030-03-01T00:00:00Z', [1, 2, 5, 8]],
      ['expirationDate:gt:2030-03-01T00:00:00Z', [3, 6]],
      ['expirationDate:gte:2030-03-01T00:00:00Z', [1, 2, 3, 6]],
      ['expirationDate:in:2030-02-01T00:00:00Z|2031-01-01T00:00:00Z', [3, 5, 8]],
      ['expirationDate:null', [0, 4, 7]],
      ['expirationDate:notnull', [1, 2, 3, 5, 6, 8]],
    ])
  })

  it('filters by createdAt and updatedAt with the comparison operators', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    await expectMatches(app, headers, [
      ['createdAt:eq:2030-01-04T00:00:00.000Z', [3, 4]],
      ['createdAt:ne:2030-01-04T00:00:00.000Z', [0, 1, 2, 5, 6, 7, 8]],
      ['createdAt:lt:2030-01-03', [0, 1]],
      ['createdAt:lte:2030-01-03', [0, 1, 2]],
      ['createdAt:gt:2030-01-06T00:00:00Z', [7, 8]],
      ['createdAt:gte:2030-01-06T00:00:00Z', [6, 7, 8]],
      ['createdAt:in:2030-01-01T00:00:00Z|2030-01-07T00:00:00Z', [0, 7, 8]],
      ['createdAt:gte:2030-01-06T22:00:00-02:00', [7, 8]],
      ['createdAt:lt:2030-01-06T22:00:00-02:00', [0, 1, 2, 3, 4, 5, 6]],
      ['updatedAt:eq:2030-01-04T00:00:00Z', [3, 4]],
      ['updatedAt:gte:2030-01-07T00:00:00Z', [2, 6, 7]],
      ['updatedAt:lt:2030-01-03T00:00:00Z', [1]],
    ])
  })

  it('filters by maxActivations; null means unlimited and ne matches it', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    await expectMatches(app, headers, [
      ['maxActivations:eq:1', [0, 3, 7, 8]],
      ['maxActivations:ne:1', [1, 2, 4, 5, 6]],
      ['maxActivations:lt:5', [0, 3, 7, 8]],
      ['maxActivations:lte:5', [0, 1, 3, 4, 7, 8]],
      ['maxActivations:gt:5', [6]],
      ['maxActivations:gte:5', [1, 4, 6]],
      ['maxActivations:in:5|100', [1, 4, 6]],
      ['maxActivations:null', [2, 5]],
      ['maxActivations:notnull', [0, 1, 3, 4, 6, 7, 8]],
      ['maxActivations:gt:-2147483648', [0, 1, 3, 4, 6, 7, 8]],
      ['maxActivations:lt:2147483647', [0, 1, 3, 4, 6, 7, 8]],
    ])
  })

  it('filters by status, which follows the clock although it is never stored', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    clock.set('2030-01-20T00:00:00.000Z')
    await expectMatches(app, headers, [
      ['status:eq:active', [0, 1, 3, 4, 5, 7, 8]],
      ['status:eq:expired', []],
      ['status:eq:revoked', [2, 6]],
    ])

    clock.set(afterAll)
    await expectMatches(app, headers, [
      ['status:eq:active', [0, 3, 4, 7]],
      ['status:eq:expired', [1, 5, 8]],
      ['status:eq:revoked', [2, 6]],
      ['status:ne:active', [1, 2, 5, 6, 8]],
      ['status:in:active|revoked', [0, 2, 3, 4, 6, 7]],
      ['status:in:expired', [1, 5, 8]],
    ])
    const expired = await listLicenses(app, headers, 'filter=status:eq:expired')
    assert.deepEqual(
      expired.data.map((license) => [license.status, license.statusDetails.isExpired]),
      [
        ['expired', true],
        ['expired', true],
        ['expired', true],
      ],
    )
  })

  it('counts a license as expired from the instant of its expirationDate', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    clock.set('2030-01-31T23:59:59.999Z')
    const before = await matching(app, headers, 'status:eq:expired')
    clock.set('2030-02-01T00:00:00.000Z')
    const at = await matching(app, headers, 'status:eq:expired')

    assert.deepEqual(before, [])
    assert.deepEqual(at, numbered(5, 8))
  })

  it('filters by productId with eq, ne and in', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    await insertLicenses(connection, [
      aLicense({ id: numberedId(0), productId }),
      aLicense({ id: numberedId(1), productId: other }),
      aLicense({ id: numberedId(2), productId: other }),
    ])

    await expectMatches(app, headers, [
      [`productId:eq:${productId}`, [0]],
      [`productId:ne:${productId}`, [1, 2]],
      [`productId:in:${productId}|${other}`, [0, 1, 2]],
      ['productId:eq:prd_doesNotExist0000000000', []],
      [`productId:eq:${productId},productId:eq:${other}`, []],
    ])
    // With ?productId= too: both must hold.
    const page = await listLicenses(
      app,
      headers,
      `productId=${other}&filter=productId:in:${productId}|${other}`,
    )
    assert.deepEqual(ids(page).sort(), numbered(1, 2))
  })

  it('requires every rule of a combined filter to hold', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))
    clock.set(afterAll)

    await expectMatches(app, headers, [
      ['status:in:active|expired,expirationDate:lt:2031-01-01T00:00:00Z', [1, 5, 8]],
      ['status:eq:active,maxActivations:eq:1,expirationDate:null', [0, 7]],
      ['expirationDate:notnull,expirationDate:gte:2030-03-01,expirationDate:lt:2031-01-01', [1, 2, 6]],
      ['maxActivations:null,status:eq:revoked', [2]],
      ['createdAt:gte:2030-01-04,createdAt:lte:2030-01-04', [3, 4]],
    ])
  })

  it('filters, sorts and pages together', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))
    clock.set(afterAll)

    const page = await listLicenses(
      app,
      headers,
      'filter=status:ne:revoked&sort=expirationDate:asc&limit=3&page=1',
    )

    assert.deepEqual(ids(page), numbered(3, 0, 4))
    assert.deepEqual([page.totalCount, page.totalPages, page.nextPage], [7, 3, 2])
  })

  it('answers 400 invalid_filter naming the rule for an unknown field or operator', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const [filter, why] of [
      ['key:eq:ABCDE', /unknown field "key"/],
      ['id:eq:lic_x', /unknown field "id"/],
      ['constructor:eq:x', /unknown field "constructor"/],
      ['Status:eq:active', /unknown field "Status"/],
      ['status', /unknown operator ""/],
      ['status:is:active', /unknown operator "is"/],
      ['maxActivations:like:1', /unknown operator "like"/],
      ['maxActivations:between:1|5', /unknown operator "between"/],
      ['', /unknown field ""/],
      ['status:eq:active,', /unknown field ""/],
    ] as const) {
      await expectInvalidFilter(app, headers, filter, why)
    }
  })

  it('answers 400 validation_failed for a filter holding U+0000, before any rule is read', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const nul = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses?filter=${encodeURIComponent('productId:eq:prd_\u0000')}`,
      headers,
    })

    assert.match(expectProblem(nul, 400, 'validation_failed').detail, /NUL/)
  })

  it('answers 400 invalid_filter naming the rule for an operator that does not apply to the field', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const filter of [
      'status:lt:active',
      'status:null',
      'status:notnull',
      'createdAt:null',
      'updatedAt:notnull',
      'productId:null',
    ]) {
      await expectInvalidFilter(app, headers, filter, /does not apply to/)
    }
  })

  it('answers 400 invalid_filter naming the rule for a value that is bad, missing or not allowed', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const [filter, why] of [
      ['status:eq:pending', /"pending" is not one of active, revoked, expired/],
      ['status:eq:ACTIVE', /"ACTIVE" is not one of/],
      ['status:in:active|', /"" is not one of/],
      ['expirationDate:lt:yesterday', /not an ISO 8601 timestamp/],
      ['expirationDate:lt:2030-13-01', /not an ISO 8601 timestamp/],
      ['expirationDate:lt:2030-01-01T00:00:00', /not an ISO 8601 timestamp/],
      ['createdAt:gt:1893456000000', /not an ISO 8601 timestamp/],
      ['createdAt:gt:0000-01-01', /outside the years 0001 to 9999/],
      ['createdAt:lt:9999-12-31T23:00:00-05:00', /outside the years 0001 to 9999/],
      ['maxActivations:eq:one', /not an integer/],
      ['maxActivations:eq:1.5', /not an integer/],
      ['maxActivations:eq:1e3', /not an integer/],
      ['maxActivations:lt:9999999999', /not an integer from -2147483648 to 2147483647/],
      ['maxActivations:gt:-2147483649', /not an integer from/],
      [`productId:eq:prd_${'x'.repeat(300)}`, /longer than 256/],
      ['status:eq', /needs a value/],
      ['status:eq:', /needs a value/],
      ['status:in:', /needs a value/],
      ['expirationDate:null:', /takes no value/],
      ['expirationDate:notnull:2030-01-01', /takes no value/],
    ] as const) {
      await expectInvalidFilter(app, headers, filter, why)
    }
  })

  it('answers 400 invalid_filter for more than 20 rules or more than 50 values in one rule', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const rules = Array.from({ length: 21 }, () => 'status:eq:active').join(',')
    const values = Array.from({ length: 51 }, () => 'active').join('|')
    const many = await app.inject({ method: 'GET', url: `/api/v0/licenses?filter=${rules}`, headers })
    assert.match(expectProblem(many, 400, 'invalid_filter').detail, /at most 20 rules/)
    await expectInvalidFilter(app, headers, `status:in:${values}`, /at most 50 values/)
    const twenty = rules.split(',').slice(1).join(',')
    assert.equal(
      (await app.inject({ method: 'GET', url: `/api/v0/licenses?filter=${twenty}`, headers })).statusCode,
      200,
    )
  })

  it('answers 400 validation_failed at #/filter for a filter longer than 2048 characters', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses?filter=productId:eq:${'x'.repeat(2048)}`,
      headers,
    })

    expectInvalidField(res, '#/filter')
  })

  it('treats SQL in filter, sort, productId and starting_after as data: 200 empty or 400, nothing changes', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))
    const query = (params: string) =>
      app.inject({ method: 'GET', url: `/api/v0/licenses?${params}`, headers })
    const q = encodeURIComponent

    for (const params of [
      `filter=${q("productId:eq:x' OR 1=1 --")}`,
      `filter=${q("productId:in:x') OR ('1'='1")}`,
      `filter=${q('productId:eq:x"; DROP TABLE licenses; --')}`,
      `productId=${q("prd_x' OR '1'='1")}`,
      `productId=${q('prd_x%00')}`,
    ]) {
      const res = await query(params)
      assert.equal(res.statusCode, 200, `${params}: ${res.body}`)
      assert.deepEqual([res.json().data, res.json().totalCount], [[], 0], params)
    }
    for (const params of [
      `filter=${q("status:eq:active' OR 1=1 --")}`,
      `filter=${q('maxActivations:eq:1 OR 1=1')}`,
      `filter=${q("createdAt:gt:2030-01-01' OR '1'='1")}`,
      `filter=${q('status;DROP TABLE licenses:eq:active')}`,
      `filter=${q('expirationDate:null) OR (1=1')}`,
      `sort=${q('createdAt:desc; DROP TABLE licenses')}`,
      `starting_after=${q("lic_x' OR '1'='1")}`,
      `starting_after=${q('lic_\u0000')}`,
      `productId=${q('prd_\u0000')}`,
    ]) {
      const res = await query(params)
      assert.equal(res.statusCode, 400, `${params}: ${res.body}`)
    }
    assert.equal((await listLicenses(app, headers)).totalCount, 9)
  })
})

async function expectInvalidFilter(
  app: App,
  headers: AuthHeaders,
  filter: string,
  why: RegExp,
): Promise<void> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v0/licenses?filter=${encodeURIComponent(filter)}`,
    headers,
  })
  const problem = expectProblem(res, 400, 'invalid_filter')
  const rule = filter.split(',').at(-1) ?? filter
  assert.ok(problem.detail.includes(`"${rule}"`), `${filter}: ${problem.detail} names the rule`)
  assert.match(problem.detail, why, filter)
}
