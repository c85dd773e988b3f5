import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import {
  aVarietyOfLicenses,
  expectedOrder,
  expectInvalidField,
  ids,
  insertLicenses,
  licenseSortFields,
  listLicenses,
  numberedId,
} from '../../testing/licenses.js'

const orders = ['asc', 'desc'] as const
const afterAll = '2030-06-01T00:00:00.000Z' // every fixture license exists; some have expired

describeEachDatabase('GET /api/v0/licenses?sort=', (database) => {
  it('sorts by each field in both orders, ties broken by id in the same direction', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)
    clock.set(afterAll)

    for (const field of licenseSortFields) {
      for (const order of orders) {
        const page = await listLicenses(app, headers, `sort=${field}:${order}&limit=100`)
        assert.deepEqual(ids(page), expectedOrder(licenses, field, order, clock.now()), `${field}:${order}`)
      }
    }
  })

  it('sorts a missing expirationDate (never expires) after every date ascending, first descending', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))
    clock.set(afterAll)

    const asc = await listLicenses(app, headers, 'sort=expirationDate:asc')
    const desc = await listLicenses(app, headers, 'sort=expirationDate:desc')

    const order = [5, 8, 1, 2, 6, 3, 0, 4, 7].map(numberedId)
    assert.deepEqual(ids(asc), order)
    assert.deepEqual(ids(desc), [...order].reverse())
  })

  it('sorts an unlimited maxActivations (null) as the most', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    const asc = await listLicenses(app, headers, 'sort=maxActivations:asc')

    assert.deepEqual(ids(asc), [0, 3, 7, 8, 1, 4, 6, 2, 5].map(numberedId))
  })

  it('sorts by status active, expired, revoked, judged at the time of the request', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    clock.set('2030-01-20T00:00:00.000Z')
    const before = await listLicenses(app, headers, 'sort=status:asc')
    clock.set(afterAll)
    const after = await listLicenses(app, headers, 'sort=status:asc')
    const afterDesc = await listLicenses(app, headers, 'sort=status:desc')

    assert.deepEqual(ids(before), [0, 1, 3, 4, 5, 7, 8, 2, 6].map(numberedId))
    assert.deepEqual(ids(after), [0, 3, 4, 7, 1, 5, 8, 2, 6].map(numberedId))
    assert.deepEqual(ids(afterDesc), [6, 2, 8, 5, 1, 7, 4, 3, 0].map(numberedId))
    assert.deepEqual(
      after.data.map((license) => license.status),
      ['active', 'active', 'active', 'active', 'expired', 'expired', 'expired', 'revoked', 'revoked'],
    )
  })

  it('never repeats or skips a license across pages, in every sort order', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)
    clock.set(afterAll)

    for (const field of licenseSortFields) {
      for (const order of orders) {
        const pages = []
        for (let page = 0; page < 5; page++) {
          pages.push(...ids(await listLicenses(app, headers, `sort=${field}:${order}&limit=2&page=${page}`)))
        }
        assert.deepEqual(pages, expectedOrder(licenses, field, order, clock.now()), `${field}:${order}`)
      }
    }
  })

  it('sorts ascending when the order is left out', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    const page = await listLicenses(app, headers, 'sort=createdAt')

    assert.deepEqual(ids(page), [0, 1, 2, 3, 4, 5, 6, 7, 8].map(numberedId))
  })

  it('answers 400 validation_failed at #/sort for a sort it does not know, changing nothing', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    for (const sort of [
      '',
      'id:asc',
      'productId:asc',
      'createdat:asc',
      'createdAt:ASC',
      'createdAt:up',
      'createdAt:',
      'createdAt:asc:id',
      ':asc',
      'createdAt:asc,key:desc',
      'created_at:asc',
      'createdAt; DROP TABLE licenses; --',
      'createdAt:asc nulls first',
      '(select 1):asc',
    ]) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/v0/licenses?sort=${encodeURIComponent(sort)}`,
        headers,
      })
      const problem = expectInvalidField(res, '#/sort')
      assert.match(problem.detail, /createdAt, updatedAt, expirationDate, maxActivations, key, status/, sort)
    }
    assert.equal((await listLicenses(app, headers)).totalCount, 9)
  })
})
