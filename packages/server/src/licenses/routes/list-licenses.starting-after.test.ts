import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LicenseResource, Paginated } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { buildTestApp, createProduct, productKeyHeaders } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import {
  type AuthHeaders,
  aLicense,
  aVarietyOfLicenses,
  daysAfterStart,
  expectedOrder,
  expectInvalidField,
  ids,
  insertLicenses,
  licenseSortFields,
  listLicenses,
  numberedId,
} from '../../testing/licenses.js'

const afterAll = '2030-06-01T00:00:00.000Z'

/** Follows `starting_after` from the first page (or from `after`) to the end; returns every page. */
async function walk(
  app: App,
  headers: AuthHeaders,
  params: string,
  after?: string,
): Promise<Paginated<LicenseResource>[]> {
  const pages = [
    await listLicenses(app, headers, after === undefined ? params : `${params}&starting_after=${after}`),
  ]
  for (let last = pages.at(-1); last?.hasNextPage; last = pages.at(-1)) {
    const cursor = last.data.at(-1)?.id
    assert.ok(cursor !== undefined && pages.length < 20, params)
    pages.push(await listLicenses(app, headers, `${params}&starting_after=${cursor}`))
  }
  return pages
}

/** Asserts that a starting_after page is the slice of `full` right after `cursor`, with matching numbers. */
function assertSliceAfter(
  page: Paginated<LicenseResource>,
  full: readonly string[],
  cursor: string,
  limit: number,
  context: string,
) {
  const position = full.indexOf(cursor) + 1
  assert.deepEqual(ids(page), full.slice(position, position + limit), context)
  assert.deepEqual(
    [page.page, page.totalCount, page.hasNextPage, page.limit],
    [Math.floor(position / limit), full.length, position + limit < full.length, limit],
    context,
  )
}

describeEachDatabase('GET /api/v0/licenses?starting_after=', (database) => {
  it('continues every sort order with no gap or overlap, reporting page floor(position / limit)', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)
    clock.set(afterAll) // some have expired, so status has all three values

    for (const field of licenseSortFields) {
      for (const order of ['asc', 'desc'] as const) {
        const sort = `${field}:${order}`
        const full = expectedOrder(licenses, field, order, clock.now())
        const pages = await walk(app, headers, `sort=${sort}&limit=3`)

        assert.deepEqual(pages.flatMap(ids), full, sort)
        for (const [index, page] of pages.entries()) {
          const previous = pages[index - 1]
          const cursor = previous?.data.at(-1)?.id
          if (cursor !== undefined) {
            assertSliceAfter(page, full, cursor, 3, `${sort} after ${cursor}`)
          }
        }
      }
    }
  })

  it('continues the default order, newest first', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)

    const pages = await walk(app, headers, 'limit=4')

    assert.deepEqual(pages.flatMap(ids), expectedOrder(licenses, 'createdAt', 'desc', new Date(afterAll)))
    assert.deepEqual(
      pages.map((page) => page.page),
      [0, 1, 2],
    )
  })

  it('continues after any item, not only at page boundaries', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)
    const full = expectedOrder(licenses, 'key', 'asc', new Date(afterAll))

    for (const [index, cursor] of full.entries()) {
      const page = await listLicenses(app, headers, `sort=key:asc&limit=3&starting_after=${cursor}`)
      assertSliceAfter(page, full, cursor, 3, `after #${index}`)
    }
    const fifth = full[4] ?? ''
    const page = await listLicenses(app, headers, `sort=key:asc&limit=3&starting_after=${fifth}`)
    assert.deepEqual(
      [page.page, page.hasPrevPage, page.prevPage, page.hasNextPage, page.nextPage, page.totalPages],
      [1, true, 0, true, 2, 3],
    )
  })

  it('answers an empty page after the last item', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)
    const last = expectedOrder(licenses, 'createdAt', 'asc', new Date(afterAll)).at(-1) ?? ''

    const page = await listLicenses(app, headers, `sort=createdAt:asc&limit=3&starting_after=${last}`)

    assert.deepEqual(page, {
      data: [],
      totalCount: 9,
      page: 3,
      limit: 3,
      totalPages: 3,
      hasPrevPage: true,
      hasNextPage: false,
      prevPage: 2,
      nextPage: null,
    })
  })

  it('stays on the same items when licenses are created between pages', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)
    const original = expectedOrder(licenses, 'createdAt', 'desc', new Date(afterAll))

    const first = await listLicenses(app, headers, 'limit=3')
    // Two newer licenses (they sort first) and one whose createdAt falls among the later pages.
    await insertLicenses(connection, [
      aLicense({ id: numberedId(100), productId, createdAt: daysAfterStart(10) }),
      aLicense({ id: numberedId(101), productId, createdAt: daysAfterStart(11) }),
      aLicense({ id: numberedId(102), productId, createdAt: daysAfterStart(2.5) }),
    ])
    const cursor = ids(first).at(-1) ?? ''
    const second = await listLicenses(app, headers, `limit=3&starting_after=${cursor}`)
    const rest = await walk(app, headers, 'limit=3', ids(second).at(-1))
    const byPageNumber = await listLicenses(app, headers, 'limit=3&page=1')

    assert.deepEqual(ids(first), original.slice(0, 3))
    assert.deepEqual(ids(second), original.slice(3, 6))
    assert.deepEqual([second.page, second.totalCount], [Math.floor(5 / 3), 12]) // two newer ones before it now
    const seen = [...ids(first), ...ids(second), ...rest.flatMap(ids)]
    assert.deepEqual(
      seen.filter((id) => original.includes(id)),
      original,
    )
    assert.deepEqual(
      seen.filter((id) => !original.includes(id)),
      [numberedId(102)],
    )
    // What page numbers would have done: the newer licenses push an already seen one onto page 1.
    assert.ok(ids(byPageNumber).includes(cursor))
  })

  it('applies the filter and productId to the items after the cursor, even when the cursor does not match', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, database)
    const licenses = aVarietyOfLicenses(productId)
    await insertLicenses(connection, licenses)
    clock.set(afterAll)

    const filtered = await walk(app, headers, 'filter=status:eq:active&sort=createdAt:asc&limit=2')
    const afterRevoked = await listLicenses(
      app,
      headers,
      `filter=status:eq:active&sort=createdAt:asc&starting_after=${numberedId(2)}`,
    )
    const scoped = await listLicenses(
      app,
      headers,
      `productId=${productId}&sort=createdAt:asc&limit=2&starting_after=${numberedId(4)}`,
    )

    assert.deepEqual(filtered.flatMap(ids), [0, 3, 4, 7].map(numberedId))
    assert.deepEqual(ids(afterRevoked), [3, 4, 7].map(numberedId))
    assert.deepEqual([afterRevoked.page, afterRevoked.totalCount], [0, 4]) // one active license precedes it
    assert.deepEqual(ids(scoped), [5, 6].map(numberedId))
  })

  it('answers 400 validation_failed at #/starting_after when combined with page', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    await insertLicenses(connection, aVarietyOfLicenses(productId))

    for (const page of [0, 1]) {
      const res = await app.inject({
        method: 'GET',
        url: `/api/v0/licenses?page=${page}&starting_after=${numberedId(1)}`,
        headers,
      })
      expectInvalidField(res, '#/starting_after')
    }
  })

  it('answers 400 validation_failed at #/starting_after for an id it cannot see', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const other = await createProduct(app, headers)
    await insertLicenses(connection, [
      aLicense({ id: numberedId(0), productId }),
      aLicense({ id: numberedId(1), productId: other }),
    ])
    const productHeaders = await productKeyHeaders(app, headers, productId)
    const list = (headers: AuthHeaders, query: string) =>
      app.inject({ method: 'GET', url: `/api/v0/licenses?${query}`, headers })

    for (const cursor of ['lic_doesNotExist000000000', 'nonsense', productId, '%00']) {
      expectInvalidField(await list(headers, `starting_after=${cursor}`), '#/starting_after')
    }
    expectInvalidField(await list(headers, 'starting_after='), '#/starting_after')
    // Another product's license: invisible to its product key, and outside an admin's productId.
    expectInvalidField(await list(productHeaders, `starting_after=${numberedId(1)}`), '#/starting_after')
    expectInvalidField(
      await list(headers, `productId=${productId}&starting_after=${numberedId(1)}`),
      '#/starting_after',
    )
    assert.deepEqual(ids(await listLicenses(app, headers, `starting_after=${numberedId(1)}`)), [
      numberedId(0),
    ])
  })
})
