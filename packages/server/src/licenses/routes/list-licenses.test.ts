import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LicenseResource, Paginated, ProductId } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import type { Connection } from '../../storage/connect.js'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import {
  type AuthHeaders,
  aLicense,
  createLicense,
  daysAfterStart,
  expectInvalidField,
  getLicense,
  ids,
  insertLicenses,
  listLicenses,
  numberedId,
} from '../../testing/licenses.js'

/** Stores `count` licenses of `productId`, t000 oldest, one minute apart; returns their ids newest first. */
async function seed(connection: Connection, productId: ProductId, count: number): Promise<string[]> {
  const licenses = Array.from({ length: count }, (_, n) =>
    aLicense({ id: numberedId(n), productId, createdAt: daysAfterStart(n / 1440) }),
  )
  await insertLicenses(connection, licenses)
  return licenses.map((license) => license.id).reverse()
}

/** The envelope without its data, for comparing the eight numbers and flags at once. */
function envelope(page: Paginated<LicenseResource>) {
  const { data: _, ...rest } = page
  return rest
}

async function allPages(app: App, headers: AuthHeaders, limit: number, pages: number) {
  const result = []
  for (let page = 0; page < pages; page++) {
    result.push(await listLicenses(app, headers, `limit=${limit}&page=${page}`))
  }
  return result
}

describeEachDatabase('GET /api/v0/licenses', (database) => {
  it('answers an empty page 0 when there are no licenses', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const page = await listLicenses(app, headers)

    assert.deepEqual(page, {
      data: [],
      totalCount: 0,
      page: 0,
      limit: 30,
      totalPages: 0,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    })
  })

  it('answers an empty page with no previous page past the end of an empty list', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const page = await listLicenses(app, headers, 'page=3&limit=10')

    assert.deepEqual(page, {
      data: [],
      totalCount: 0,
      page: 3,
      limit: 10,
      totalPages: 0,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    })
  })

  it('returns fewer items than a page on a single page', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const expected = await seed(connection, productId, 4)

    const page = await listLicenses(app, headers, 'limit=10')

    assert.deepEqual(ids(page), expected)
    assert.deepEqual(envelope(page), {
      totalCount: 4,
      page: 0,
      limit: 10,
      totalPages: 1,
      hasPrevPage: false,
      hasNextPage: false,
      prevPage: null,
      nextPage: null,
    })
  })

  it('splits an exact multiple of limit into full pages', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const expected = await seed(connection, productId, 6)

    const [first, second] = await allPages(app, headers, 3, 2)

    assert.ok(first && second)
    assert.deepEqual(ids(first), expected.slice(0, 3))
    assert.deepEqual(envelope(first), {
      totalCount: 6,
      page: 0,
      limit: 3,
      totalPages: 2,
      hasPrevPage: false,
      hasNextPage: true,
      prevPage: null,
      nextPage: 1,
    })
    assert.deepEqual(ids(second), expected.slice(3, 6))
    assert.deepEqual(envelope(second), {
      totalCount: 6,
      page: 1,
      limit: 3,
      totalPages: 2,
      hasPrevPage: true,
      hasNextPage: false,
      prevPage: 0,
      nextPage: null,
    })
  })

  it('returns a partial last page, and a middle page with both neighbours', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const expected = await seed(connection, productId, 7)

    const [, middle, last] = await allPages(app, headers, 3, 3)

    assert.ok(middle && last)
    assert.deepEqual(ids(middle), expected.slice(3, 6))
    assert.deepEqual(envelope(middle), {
      totalCount: 7,
      page: 1,
      limit: 3,
      totalPages: 3,
      hasPrevPage: true,
      hasNextPage: true,
      prevPage: 0,
      nextPage: 2,
    })
    assert.deepEqual(ids(last), expected.slice(6))
    assert.deepEqual(envelope(last), {
      totalCount: 7,
      page: 2,
      limit: 3,
      totalPages: 3,
      hasPrevPage: true,
      hasNextPage: false,
      prevPage: 1,
      nextPage: null,
    })
  })

  it('answers a page past the end with no items, the totals, and the last page as prevPage', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await seed(connection, productId, 7)

    for (const number of [3, 4, 1_000_000]) {
      const page = await listLicenses(app, headers, `limit=3&page=${number}`)
      assert.deepEqual(page, {
        data: [],
        totalCount: 7,
        page: number,
        limit: 3,
        totalPages: 3,
        hasPrevPage: true,
        hasNextPage: false,
        prevPage: 2,
        nextPage: null,
      })
    }
  })

  it('pages one item at a time with limit 1', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const expected = await seed(connection, productId, 3)

    const pages = await allPages(app, headers, 1, 3)

    assert.deepEqual(
      pages.map(ids),
      expected.map((id) => [id]),
    )
    assert.deepEqual(
      pages.map((page) => [page.totalPages, page.prevPage, page.nextPage]),
      [
        [3, null, 1],
        [3, 0, 2],
        [3, 1, null],
      ],
    )
  })

  it('returns 30 items by default and up to 100 with limit 100', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const expected = await seed(connection, productId, 101)

    const byDefault = await listLicenses(app, headers)
    const hundred = await listLicenses(app, headers, 'limit=100')
    const rest = await listLicenses(app, headers, 'limit=100&page=1')

    assert.deepEqual(ids(byDefault), expected.slice(0, 30))
    assert.deepEqual(
      [byDefault.limit, byDefault.totalCount, byDefault.totalPages, byDefault.nextPage],
      [30, 101, 4, 1],
    )
    assert.deepEqual(ids(hundred), expected.slice(0, 100))
    assert.deepEqual([hundred.limit, hundred.totalPages, hundred.hasNextPage], [100, 2, true])
    assert.deepEqual(ids(rest), expected.slice(100))
    assert.deepEqual([rest.hasNextPage, rest.prevPage], [false, 0])
  })

  it('sorts newest first by default', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const first = await createLicense(app, headers, { productId })
    clock.advance(1000)
    const second = await createLicense(app, headers, { productId })

    const page = await listLicenses(app, headers)

    assert.deepEqual(ids(page), [second.id, first.id])
  })

  it('returns each license as GET /licenses/:id does, status judged at the time of the request', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-02-01T00:00:00.000Z',
    })

    clock.set('2030-03-01T00:00:00.000Z')
    const page = await listLicenses(app, headers)

    const license = await getLicense(app, headers, created.id)
    assert.deepEqual(page.data, [license])
    assert.equal(license.status, 'expired')
    assert.equal(license.statusDetails.determinedAt, '2030-03-01T00:00:00.000Z')
  })

  it('answers 400 validation_failed naming limit for 0, 101, -1, 1.5, a word or nothing', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const limit of ['0', '101', '-1', '1.5', 'ten', '']) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/licenses?limit=${limit}`, headers })
      expectInvalidField(res, '#/limit')
    }
  })

  it('answers 400 validation_failed naming page for -1, 1.5, a word, nothing or more than 1,000,000', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const page of ['-1', '1.5', 'two', '', '1000001']) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/licenses?page=${page}`, headers })
      expectInvalidField(res, '#/page')
    }
  })

  it('answers 400 validation_failed naming an unknown query parameter', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const name of ['offset', 'status', 'startingAfter']) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/licenses?${name}=1`, headers })
      const problem = expectInvalidField(res, `#/${name}`)
      assert.match(problem.detail, new RegExp(`unknown parameter "${name}"`))
    }
  })

  it('lists every product without productId, and one product with it', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const mine = await createLicense(app, headers, { productId })
    const theirs = await createLicense(app, headers, { productId: other })

    const all = await listLicenses(app, headers, 'sort=key:asc')
    const onlyMine = await listLicenses(app, headers, `productId=${productId}`)
    const onlyTheirs = await listLicenses(app, headers, `productId=${other}`)
    const none = await listLicenses(app, headers, 'productId=prd_doesNotExist0000000000')

    assert.deepEqual(new Set(ids(all)), new Set([mine.id, theirs.id]))
    assert.deepEqual(ids(onlyMine), [mine.id])
    assert.deepEqual(ids(onlyTheirs), [theirs.id])
    assert.deepEqual([none.data, none.totalCount], [[], 0])
  })

  it('answers 400 naming productId when productId is not a product id', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const productId of ['abc', 'lic_abc', '']) {
      const res = await app.inject({ method: 'GET', url: `/api/v0/licenses?productId=${productId}`, headers })
      expectInvalidField(res, '#/productId')
    }
  })

  it('shows a product key only its own licenses, and nothing when it asks for another product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    const mine = await createLicense(app, headers, { productId })
    await createLicense(app, headers, { productId: other })
    const productHeaders = await productKeyHeaders(app, headers, productId)

    const all = await listLicenses(app, productHeaders)
    const own = await listLicenses(app, productHeaders, `productId=${productId}`)
    const foreign = await listLicenses(app, productHeaders, `productId=${other}&page=2`)
    const filtered = await listLicenses(app, productHeaders, `filter=productId:eq:${other}`)

    assert.deepEqual([ids(all), all.totalCount], [[mine.id], 1])
    assert.deepEqual(ids(own), [mine.id])
    assert.deepEqual([foreign.data, foreign.totalCount, foreign.page], [[], 0, 2])
    assert.deepEqual([filtered.data, filtered.totalCount], [[], 0])
  })
})
