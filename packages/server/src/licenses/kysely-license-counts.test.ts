import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LicenseResource } from '@keyturn/protocol'
import { type Kysely, sql } from 'kysely'
import type { App } from '../http/app-types.js'
import { toNullableDate } from '../storage/database.js'
import { licenseCounts } from '../storage/migrations/2026-11-23-90-license-counts.js'
import { buildTestApp, createProduct } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { type AuthHeaders, createLicense, getLicense, listLicenses } from '../testing/licenses.js'
import { expirationDateBound } from './license.js'

const day = 86_400_000
const cut = '2030-01-10T12:00:00.000Z'

/** The list requests checked after every kind of write: each filter the counts answer, and one they do not. */
const requests: { filter: string; sort: string; keeps: (license: LicenseResource) => boolean }[] = [
  {
    filter: `status:in:active|expired,expirationDate:lt:${cut}`,
    sort: 'expirationDate:asc',
    keeps: (l) => l.status !== 'revoked' && l.expirationDate !== null && l.expirationDate < cut,
  },
  {
    filter: `status:in:active|expired,expirationDate:lt:${cut}`,
    sort: 'expirationDate:desc',
    keeps: (l) => l.status !== 'revoked' && l.expirationDate !== null && l.expirationDate < cut,
  },
  { filter: 'status:eq:active', sort: 'expirationDate:asc', keeps: (l) => l.status === 'active' },
  { filter: 'status:eq:expired', sort: 'expirationDate:desc', keeps: (l) => l.status === 'expired' },
  { filter: 'status:ne:expired', sort: 'expirationDate:asc', keeps: (l) => l.status !== 'expired' },
  {
    filter: `expirationDate:gte:2030-01-08T06:00:00.000Z,expirationDate:lte:${cut}`,
    sort: 'expirationDate:desc',
    keeps: (l) =>
      l.expirationDate !== null && l.expirationDate >= '2030-01-08T06:00:00.000Z' && l.expirationDate <= cut,
  },
  { filter: 'expirationDate:null', sort: 'expirationDate:asc', keeps: (l) => l.expirationDate === null },
  { filter: '', sort: 'expirationDate:desc', keeps: () => true },
  { filter: 'status:eq:active', sort: 'createdAt:desc', keeps: (l) => l.status === 'active' },
  // Outside the counts (createdAt): counted from the index, as before.
  {
    filter: 'createdAt:gte:2029-01-01T00:00:00.000Z,status:eq:active',
    sort: 'expirationDate:asc',
    keeps: (l) => l.status === 'active',
  },
]

const never = expirationDateBound.toISOString()

function expectedOrder(licenses: LicenseResource[], sort: string): LicenseResource[] {
  const [field, order] = sort.split(':')
  const key = (l: LicenseResource) => (field === 'createdAt' ? l.createdAt : (l.expirationDate ?? never))
  const ascending = [...licenses].sort((a, b) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  )
  return order === 'asc' ? ascending : ascending.reverse()
}

/**
 * Every request's totalCount, page 0, a later page, a page past the end and a starting_after from the
 * middle, against the licenses as GET reports them now (statuses judged at the clock's instant).
 */
async function expectExactLists(app: App, headers: AuthHeaders, ids: readonly string[], when: string) {
  const all = await Promise.all(ids.map((id) => getLicense(app, headers, id as LicenseResource['id'])))
  for (const { filter, sort, keeps } of requests) {
    const expected = expectedOrder(all.filter(keeps), sort).map((l) => l.id)
    const base = `${filter === '' ? '' : `filter=${encodeURIComponent(filter)}&`}sort=${sort}&limit=3`
    const label = `${when}: ${filter || '(no filter)'} ${sort}`
    for (const page of [0, 2, Math.ceil(expected.length / 3) + 1]) {
      const got = await listLicenses(app, headers, `${base}&page=${page}`)
      assert.equal(got.totalCount, expected.length, `${label} totalCount`)
      assert.deepEqual(
        got.data.map((l) => l.id),
        expected.slice(page * 3, page * 3 + 3),
        `${label} page ${page}`,
      )
    }
    const middle = Math.floor(expected.length / 2)
    if (expected.length > 0) {
      const got = await listLicenses(app, headers, `${base}&starting_after=${expected[middle]}`)
      assert.deepEqual(
        got.data.map((l) => l.id),
        expected.slice(middle + 1, middle + 4),
        `${label} after #${middle}`,
      )
      assert.equal(got.page, Math.floor((middle + 1) / 3), `${label} after #${middle}: page`)
    }
  }
}

/** license_counts holds, per product, day and revoked-or-not, exactly the licenses there are. */
async function expectCountsMatchLicenses(db: Kysely<unknown>): Promise<void> {
  const licenses = await sql<{
    product_id: string
    expiration_date: Date | string | null
    revoked_at: unknown
  }>`
    select product_id, expiration_date, revoked_at from licenses`.execute(db)
  const expected = new Map<string, number>()
  for (const row of licenses.rows) {
    const on = (toNullableDate(row.expiration_date) ?? expirationDateBound).toISOString().slice(0, 10)
    const key = `${row.product_id} ${on} ${row.revoked_at === null ? 0 : 1}`
    expected.set(key, (expected.get(key) ?? 0) + 1)
  }
  const counted = await sql<{
    product_id: string
    expires_on: string
    revoked: number
    licenses: number | string
  }>`
    select product_id, expires_on, revoked, sum(licenses) as licenses from license_counts
    group by product_id, expires_on, revoked`.execute(db)
  const actual = new Map(
    counted.rows
      .filter((row) => Number(row.licenses) !== 0)
      .map((row) => [`${row.product_id} ${row.expires_on} ${Number(row.revoked)}`, Number(row.licenses)]),
  )
  assert.deepEqual(
    [...actual].sort(([a], [b]) => (a < b ? -1 : 1)),
    [...expected].sort(([a], [b]) => (a < b ? -1 : 1)),
  )
}

describeEachDatabase('license lists counted from license_counts', (database) => {
  it('keeps every total, page and cursor exact through each kind of write and as time passes', async (t) => {
    const { app, headers, productId, clock, connection } = await buildTestApp(t, database)
    const db = connection.db as unknown as Kysely<unknown>
    const other = await createProduct(app, headers)
    const call = async (method: 'POST' | 'PATCH', url: string, payload: object = {}) => {
      const res = await app.inject({ method, url: `/api/v0${url}`, headers, payload })
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`)
      return res.json()
    }

    // Several licenses a day, across the cut, of two products; some never expire.
    const ids: string[] = []
    for (let n = 0; n < 24; n++) {
      const expires = n % 6 === 5 ? null : new Date(Date.parse('2030-01-05T03:00:00.000Z') + n * 0.45 * day)
      const license = await createLicense(app, headers, {
        productId: n % 4 === 3 ? other : productId,
        expirationDate: expires?.toISOString() ?? null,
      })
      ids.push(license.id)
    }
    const trial = await call('POST', '/policies', {
      productId,
      name: 'Trial',
      duration: 3 * 86_400,
      expirationBasis: 'firstActivation',
    })
    const waiting = await createLicense(app, headers, { productId, policyId: trial.id })
    ids.push(waiting.id)
    for (const id of [ids[1], ids[8], ids[13], ids[17]]) {
      await call('POST', `/licenses/${id}/revoke`)
    }
    await expectExactLists(app, headers, ids, 'created and revoked')
    await expectCountsMatchLicenses(db)

    await call('PATCH', `/licenses/${ids[0]}`, { expirationDate: '2030-01-10T18:00:00.000Z' }) // across the cut
    await call('PATCH', `/licenses/${ids[2]}`, { expirationDate: null })
    await call('PATCH', `/licenses/${ids[5]}`, { expirationDate: '2030-01-06T00:00:00.000Z' }) // from never
    await call('POST', `/licenses/${ids[8]}/reinstate`)
    await call('POST', `/licenses/${ids[3]}/renew`, { duration: 2 * 86_400 })
    await call('POST', `/licenses/${ids[13]}/renew`, { duration: 86_400 }) // revoked and renewed
    await call('POST', `/licenses/${waiting.id}/activations`, { fingerprint: 'first' }) // starts its clock
    await expectExactLists(app, headers, ids, 'updated')
    await expectCountsMatchLicenses(db)

    clock.advance(7 * day) // some active licenses are now expired: nothing was written
    await expectExactLists(app, headers, ids, 'a week later')

    // No route deletes a license; the trigger still keeps the counts when a row goes.
    const gone = [ids[4], ids[9]]
    await sql`delete from licenses where id in (${sql.join(gone)})`.execute(db)
    await expectExactLists(
      app,
      headers,
      ids.filter((id) => !gone.includes(id)),
      'after deletes',
    )
    await expectCountsMatchLicenses(db)
  })

  it('fills the counts for licenses that existed before the migration', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const db = connection.db as unknown as Kysely<unknown>
    const migration = licenseCounts(database.kind)
    await migration.down(db)
    for (let n = 0; n < 6; n++) {
      await createLicense(app, headers, {
        productId,
        expirationDate:
          n % 3 === 0 ? null : new Date(Date.parse('2030-02-01T00:00:00.000Z') + n * day).toISOString(),
      })
    }
    await migration.up(db)
    await expectCountsMatchLicenses(db)
    const page = await listLicenses(app, headers, 'filter=status:eq:active&sort=expirationDate:asc')
    assert.equal(page.totalCount, 6)
  })
})
