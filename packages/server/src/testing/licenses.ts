import assert from 'node:assert/strict'
import type {
  ErrorCode,
  LicenseId,
  LicenseResource,
  LicenseStatus,
  Paginated,
  Problem,
  ProductId,
  ValidationResult,
} from '@keyturn/protocol'
import { problemType } from '@keyturn/protocol'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { newLicenseKey } from '../core/ids.js'
import type { App } from '../http/app-types.js'
import { KyselyLicenseStore } from '../licenses/kysely-license-store.js'
import { type License, stateAt } from '../licenses/license.js'
import type { Connection } from '../storage/connect.js'
import { testStart } from './build-test-app.js'

export type AuthHeaders = { readonly authorization: string }

/** The license key format (docs/decisions/0001-licenses.md): five groups of five Crockford base32 characters. */
export const licenseKeyFormat = /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){4}$/
export const licenseIdFormat = /^lic_[0-9A-Za-z]{22}$/

/** Creates a license over HTTP and returns it; fails the test unless the answer is 201. */
export async function createLicense(
  app: App,
  headers: AuthHeaders,
  body: Record<string, unknown>,
): Promise<LicenseResource> {
  const res = await app.inject({ method: 'POST', url: '/api/v0/licenses', headers, payload: body })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** GET /api/v0/licenses/:id; fails the test unless the answer is 200. */
export async function getLicense(app: App, headers: AuthHeaders, id: LicenseId): Promise<LicenseResource> {
  const res = await app.inject({ method: 'GET', url: `/api/v0/licenses/${id}`, headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** GET /api/v0/licenses?<query>; fails the test unless the answer is 200. */
export async function listLicenses(
  app: App,
  headers: AuthHeaders,
  query = '',
): Promise<Paginated<LicenseResource>> {
  const res = await app.inject({
    method: 'GET',
    url: `/api/v0/licenses${query === '' ? '' : `?${query}`}`,
    headers,
  })
  assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
  return res.json()
}

/** POST /api/v0/licenses/validate; fails the test unless the answer is 200. */
export async function validateLicense(
  app: App,
  headers: AuthHeaders,
  body: { key: string; productId: ProductId },
): Promise<ValidationResult> {
  const res = await app.inject({ method: 'POST', url: '/api/v0/licenses/validate', headers, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/**
 * Asserts that a response is the RFC 9457 problem for `code` (status, media type, `type`, request id)
 * and returns its body for further checks.
 */
export function expectProblem(res: LightMyRequestResponse, status: number, code: ErrorCode): Problem {
  assert.equal(res.statusCode, status, res.body)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/, res.body)
  const problem: Problem = res.json()
  assert.equal(problem.code, code, res.body)
  assert.equal(problem.status, status, res.body)
  assert.equal(problem.type, problemType(code), res.body)
  assert.equal(problem.requestId, res.headers['request-id'], res.body)
  return problem
}

/** Asserts a 400 `validation_failed` whose first field error points at `pointer`. */
export function expectInvalidField(res: LightMyRequestResponse, pointer: string): Problem {
  const problem = expectProblem(res, 400, 'validation_failed')
  assert.equal(problem.errors?.[0]?.pointer, pointer, res.body)
  return problem
}

/**
 * A license as stored, for tests that seed data through the store rather than the API: it may have
 * any id (ids made of one character class sort alike under every collation) or a past expiration.
 */
export function aLicense(fields: Partial<License> & { readonly productId: ProductId }): License {
  const at = new Date(testStart)
  return {
    id: `lic_${newLicenseKey().replaceAll('-', '')}`,
    key: newLicenseKey(),
    maxActivations: 1,
    expirationDate: null,
    revokedAt: null,
    activationCount: 0,
    heartbeatTtl: null,
    maxUses: null,
    uses: 0,
    usesResetAt: null,
    customerId: null,
    policyId: null,
    entitlements: [],
    metadata: {},
    firstActivationDuration: null,
    paymentGraceEndsAt: null,
    createdAt: at,
    updatedAt: at,
    ...fields,
  }
}

/** Stores licenses directly (fast, and free of the API's rules on ids and dates). */
export async function insertLicenses(connection: Connection, licenses: readonly License[]): Promise<void> {
  const store = new KyselyLicenseStore(connection.db)
  for (const license of licenses) {
    await store.insert(license, [], [])
  }
}

/**
 * Stores `count` alike licenses (`lic_bulk1`…, created at testStart) in one statement: thousands in
 * a moment on either engine. The table's triggers run as for any write.
 */
export async function insertManyLicenses(
  connection: Connection,
  productId: ProductId,
  count: number,
  metadata: Readonly<Record<string, unknown>>,
): Promise<void> {
  await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${sql.lit(count)})
    insert into licenses (id, product_id, key, max_activations, created_at, updated_at, metadata)
    select 'lic_bulk' || i, ${productId}, 'BULK-' || i, 1, ${sql.lit(testStart)}, ${sql.lit(testStart)},
      ${sql.lit(JSON.stringify(metadata))} from n`.execute(connection.db)
}

/** `lic_t000`, `lic_t001`, …: ids that sort by number under any collation. */
export function numberedId(n: number): LicenseId {
  return `lic_t${String(n).padStart(3, '0')}`
}

export const ids = (page: { data: readonly { id: string }[] }): string[] => page.data.map((item) => item.id)

const day = 86_400_000
/** `testStart` plus some days. */
export const daysAfterStart = (days: number): Date => new Date(Date.parse(testStart) + days * day)

/**
 * Nine licenses of one product, numbered ids, whose fields tie and differ in the ways lists care
 * about (days after testStart; expiry dates in 2030 unless noted):
 *
 * | id   | created | updated | expires     | max  | revoked |
 * |------|---------|---------|-------------|------|---------|
 * | t000 | 0       | 5       | never       | 1    |         |
 * | t001 | 1       | 1       | 03-01       | 5    |         |
 * | t002 | 2       | 9       | 03-01       | null | yes     |
 * | t003 | 3       | 3       | 2031-01-01  | 1    |         |
 * | t004 | 3       | 3       | never       | 5    |         |
 * | t005 | 4       | 4       | 02-01       | null |         |
 * | t006 | 5       | 6       | 12-01       | 100  | yes     |
 * | t007 | 6       | 6       | never       | 1    |         |
 * | t008 | 6       | 2       | 02-01       | 1    |         |
 *
 * On 2030-01-20 t002 and t006 are revoked, the rest active; on 2030-06-01 t001, t005 and t008 have
 * expired too. Returned in a scrambled order, so that insertion order cannot pass for sorting.
 */
export function aVarietyOfLicenses(productId: ProductId): License[] {
  const rows: [number, number, number, string | null, number | null, boolean][] = [
    [0, 0, 5, null, 1, false],
    [1, 1, 1, '2030-03-01T00:00:00.000Z', 5, false],
    [2, 2, 9, '2030-03-01T00:00:00.000Z', null, true],
    [3, 3, 3, '2031-01-01T00:00:00.000Z', 1, false],
    [4, 3, 3, null, 5, false],
    [5, 4, 4, '2030-02-01T00:00:00.000Z', null, false],
    [6, 5, 6, '2030-12-01T00:00:00.000Z', 100, true],
    [7, 6, 6, null, 1, false],
    [8, 6, 2, '2030-02-01T00:00:00.000Z', 1, false],
  ]
  const licenses = rows.map(([n, created, updated, expires, maxActivations, revoked]) =>
    aLicense({
      id: numberedId(n),
      productId,
      maxActivations,
      expirationDate: expires === null ? null : new Date(expires),
      revokedAt: revoked ? daysAfterStart(updated) : null,
      createdAt: daysAfterStart(created),
      updatedAt: daysAfterStart(updated),
    }),
  )
  return [4, 8, 0, 6, 2, 7, 1, 5, 3].flatMap((i) => licenses.slice(i, i + 1))
}

export type LicenseSortField =
  | 'createdAt'
  | 'updatedAt'
  | 'expirationDate'
  | 'maxActivations'
  | 'key'
  | 'status'
export const licenseSortFields: readonly LicenseSortField[] = [
  'createdAt',
  'updatedAt',
  'expirationDate',
  'maxActivations',
  'key',
  'status',
]

const statusRanks: { readonly [S in LicenseStatus]: number } = { active: 0, expired: 1, revoked: 2 }

function sortValue(license: License, field: LicenseSortField, now: Date): string | number {
  switch (field) {
    case 'createdAt':
      return license.createdAt.getTime()
    case 'updatedAt':
      return license.updatedAt.getTime()
    case 'expirationDate':
      return license.expirationDate?.getTime() ?? Number.POSITIVE_INFINITY // never expires: last
    case 'maxActivations':
      return license.maxActivations ?? Number.POSITIVE_INFINITY // unlimited: the most
    case 'key':
      return license.key
    case 'status':
      return statusRanks[stateAt(license, now).status]
  }
}

const compare = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0)

/** The documented list order, as a test oracle: ties broken by id, in the same direction. */
export function expectedOrder(
  licenses: readonly License[],
  field: LicenseSortField,
  order: 'asc' | 'desc',
  now: Date,
): string[] {
  const sign = order === 'asc' ? 1 : -1
  return [...licenses]
    .sort(
      (a, b) => sign * (compare(sortValue(a, field, now), sortValue(b, field, now)) || compare(a.id, b.id)),
    )
    .map((license) => license.id)
}
