import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LicenseId } from '@keyturn/protocol'
import { DomainError } from '../core/errors.js'
import { KyselyUnitOfWork } from '../storage/kysely-unit-of-work.js'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { createLicense, expectProblem, getLicense } from '../testing/licenses.js'
import { startWebhookReceiver } from '../testing/webhook-receiver.js'
import { KyselyUsageStore } from './kysely-usage-store.js'
import { UsageService } from './usage-service.js'

function post(
  test: TestApp,
  url: string,
  payload?: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return test.app.inject({
    method: 'POST',
    url: `/api/v0${url}`,
    headers: { ...test.headers, ...headers },
    ...(payload === undefined ? {} : { payload }),
  })
}

/** `count` increments of 1 at once, half by key and half by id. */
function incrementAtOnce(test: TestApp, license: { id: string; key: string }, count: number) {
  return Promise.all(
    Array.from({ length: count }, (_, n) =>
      n % 2 === 0
        ? post(test, '/licenses/usage', { key: license.key, productId: test.productId, increment: 1 })
        : post(test, `/licenses/${license.id}/usage`, { increment: 1 }),
    ),
  )
}

/** The license's `license.usage_incremented` events, oldest first: [request id, uses] each. */
async function incrementEvents(test: TestApp, licenseId: LicenseId): Promise<[string, number][]> {
  const res = await test.app.inject({
    method: 'GET',
    url: `/api/v0/events?filter=type:eq:license.usage_incremented,licenseId:eq:${licenseId}&sort=occurredAt:asc&limit=100`,
    headers: test.headers,
  })
  assert.equal(res.statusCode, 200, res.body)
  return res
    .json()
    .data.map((event: { requestId: string; data: { uses: number } }) => [event.requestId, event.data.uses])
}

/**
 * Usage counting that finds the license as it is now, whatever happens to it later: a request whose
 * read came before a concurrent change (the license store's reads are replaced; its writes are real).
 */
async function usageAsReadNow(test: TestApp, licenseId: LicenseId): Promise<UsageService> {
  const view = await test.services.licenses.getUsable(test.admin, licenseId, 'no usage is counted for it')
  return new UsageService({
    storage: new KyselyUnitOfWork({
      db: test.connection.db,
      clock: test.clock,
      stores: (trx) => ({ usage: new KyselyUsageStore(trx) }),
    }),
    licenses: { getUsable: async () => view, getUsableByKey: async () => view, get: async () => view },
    clock: test.clock,
  })
}

describeEachDatabase('metered usage (maxUses)', (database) => {
  it('lets exactly 500 of 1,000 concurrent increments of 1 through on maxUses 500', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, { productId, maxUses: 500 })

    const answers = await incrementAtOnce(test, license, 1000)

    const statuses = answers.map((answer) => answer.statusCode)
    assert.equal(statuses.filter((status) => status === 200).length, 500, statuses.join(','))
    assert.equal(statuses.filter((status) => status === 409).length, 500, statuses.join(','))
    const refused = answers.find((answer) => answer.statusCode === 409)
    assert.ok(refused)
    expectProblem(refused, 409, 'usage_limit_reached')
    assert.deepEqual([refused.json().uses, refused.json().maxUses], [500, 500])
    assert.equal((await getLicense(test.app, test.headers, license.id)).uses, 500)
  })

  it('records in each event the count its own increment made, under concurrent increments of one license', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, { productId, maxUses: 45 })

    const answers = await incrementAtOnce(test, license, 60)

    const counted = answers.filter((answer) => answer.statusCode === 200)
    const countOf = new Map(counted.map((answer) => [answer.headers['request-id'], answer.json().uses]))
    const oneToFortyFive = Array.from({ length: 45 }, (_, n) => n + 1)
    assert.deepEqual(
      [...countOf.values()].sort((a, b) => a - b),
      oneToFortyFive,
    )
    const events = await incrementEvents(test, license.id)
    assert.deepEqual(
      events.map(([, uses]) => uses).sort((a, b) => a - b),
      oneToFortyFive,
    )
    for (const [requestId, uses] of events) {
      assert.equal(uses, countOf.get(requestId), `the event of ${requestId}`)
    }
  })

  it('records the count an increment made when another one counted between its read and its write', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, { productId: test.productId, maxUses: 10 })
    const late = await usageAsReadNow(test, license.id) // reads uses 0

    const two = await post(test, `/licenses/${license.id}/usage`, { increment: 2 })
    const counted = await late.increment(test.admin, license.id, { increment: 3 })

    assert.equal(two.json().uses, 2, two.body)
    assert.equal(counted.license.uses, 5)
    assert.deepEqual(
      (await incrementEvents(test, license.id)).map(([, uses]) => uses),
      [2, 5],
    )
  })

  it('writes no event for an increment it refuses: at the limit, or for a license gone since it was read', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, { productId, maxUses: 3 })
    const three = await post(test, '/licenses/usage', { key: license.key, productId, increment: 3 })
    const refused = await post(test, '/licenses/usage', { key: license.key, productId, increment: 1 })
    assert.equal(three.json().uses, 3, three.body)
    expectProblem(refused, 409, 'usage_limit_reached')
    assert.deepEqual([refused.json().uses, refused.json().maxUses], [3, 3])
    assert.deepEqual(
      (await incrementEvents(test, license.id)).map(([, uses]) => uses),
      [3],
    )

    // Deleted between the read that found it usable and the increment (no route deletes a license).
    const unmetered = await createLicense(test.app, test.headers, { productId })
    const usage = await usageAsReadNow(test, unmetered.id)
    await test.connection.db.deleteFrom('licenses').where('id', '=', unmetered.id).execute()
    await assert.rejects(
      usage.increment(test.admin, unmetered.id, { increment: 1 }),
      (error) => error instanceof DomainError && error.code === 'license_not_found',
    )
    assert.deepEqual(await incrementEvents(test, unmetered.id), [])
  })

  it('stores the event of an increment as dispatched while no webhook endpoint is enabled, and delivers it with its count when one is', async (t) => {
    const test = await buildTestApp(t, database, { webhooks: { allowHttp: true, allowPrivate: true } })
    const { productId } = test
    const receiver = await startWebhookReceiver(t)
    const license = await createLicense(test.app, test.headers, { productId, maxUses: 10 })
    const dispatchedAt = async (requestId: unknown) =>
      (
        await test.connection.db
          .selectFrom('events')
          .select('dispatched_at')
          .where('request_id', '=', String(requestId))
          .executeTakeFirstOrThrow()
      ).dispatched_at

    const beforeAny = await post(test, `/licenses/${license.id}/usage`, { increment: 2 })
    const endpoint = await post(test, '/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['license.usage_incremented'],
    })
    assert.equal(endpoint.statusCode, 201, endpoint.body)
    const whileEnabled = await post(test, '/licenses/usage', { key: license.key, productId, increment: 3 })

    assert.notEqual(await dispatchedAt(beforeAny.headers['request-id']), null, 'no endpoint: dispatched')
    assert.equal(await dispatchedAt(whileEnabled.headers['request-id']), null, 'left to the dispatch')
    await test.services.deliveries.tick()
    assert.deepEqual(
      receiver.received.map((delivery) => JSON.parse(delivery.body).data.uses),
      [5],
    )
  })

  it('adds nothing when an increment would pass maxUses, answers validation with usage_exceeded once used up, and resets to 0', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId, app, headers } = test
    const license = await createLicense(app, headers, { productId, maxUses: 10 })
    assert.deepEqual([license.maxUses, license.uses, license.usesResetAt], [10, 0, null])

    const seven = await post(test, `/licenses/${license.id}/usage`, { increment: 7 })
    const tooMany = await post(test, '/licenses/usage', { key: license.key, productId, increment: 4 })
    const one = await post(test, '/licenses/usage', { key: license.key, productId }) // default 1
    const stillValid = await post(test, '/licenses/validate', { key: license.key, productId })
    const two = await post(test, `/licenses/${license.id}/usage`, { increment: 2 })
    const usedUp = await post(test, '/licenses/validate', { key: license.key, productId })

    assert.equal(seven.json().uses, 7, seven.body)
    expectProblem(tooMany, 409, 'usage_limit_reached')
    assert.deepEqual([tooMany.json().uses, tooMany.json().maxUses], [7, 10])
    assert.equal(one.json().uses, 8, one.body)
    assert.deepEqual([stillValid.json().isValid, stillValid.json().reason], [true, null])
    assert.equal(two.json().uses, 10, two.body)
    assert.deepEqual([usedUp.json().isValid, usedUp.json().reason], [false, 'usage_exceeded'])

    test.clock.advance(60_000)
    const reset = await post(test, `/licenses/${license.id}/usage/reset`)
    assert.equal(reset.statusCode, 200, reset.body)
    assert.deepEqual([reset.json().uses, reset.json().usesResetAt], [0, '2030-01-01T00:01:00.000Z'])
    const valid = await post(test, '/licenses/validate', { key: license.key, productId })
    assert.equal(valid.json().isValid, true, valid.body)
    const events = await app.inject({
      method: 'GET',
      url: '/api/v0/events?filter=type:in:license.usage_incremented|license.usage_reset&sort=occurredAt:asc',
      headers,
    })
    assert.deepEqual(
      events
        .json()
        .data.map((event: { type: string; data: { uses: number } }) => [event.type, event.data.uses]),
      [
        ['license.usage_incremented', 7],
        ['license.usage_incremented', 8],
        ['license.usage_incremented', 10],
        ['license.usage_reset', 0],
      ],
      events.body,
    )
  })

  it('puts usage_exceeded after revoked and not_activated, and never limits an unmetered license', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId, app, headers } = test
    const metered = await createLicense(app, headers, { productId, maxUses: 1 })
    await post(test, `/licenses/${metered.id}/usage`, {})
    const validate = (body: Record<string, unknown>) =>
      post(test, '/licenses/validate', { key: metered.key, productId, ...body })

    const withoutSeat = await validate({ fingerprint: 'no-seat' })
    await post(test, `/licenses/${metered.id}/revoke`)
    const revoked = await validate({})
    const unmetered = await createLicense(app, headers, { productId })
    const big = await post(test, `/licenses/${unmetered.id}/usage`, { increment: 1_000_000 })

    assert.equal(withoutSeat.json().reason, 'not_activated', withoutSeat.body)
    assert.equal(revoked.json().reason, 'revoked', revoked.body)
    assert.deepEqual([big.json().uses, big.json().maxUses], [1_000_000, null], big.body)
    expectProblem(await post(test, `/licenses/${metered.id}/usage`, {}), 409, 'license_not_active')
  })

  it('counts a retried increment once when it carries the same Idempotency-Key', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, { productId, maxUses: 100 })
    const body = { key: license.key, productId, increment: 5 }

    const first = await post(test, '/licenses/usage', body, { 'idempotency-key': 'export-42' })
    const retry = await post(test, '/licenses/usage', body, { 'idempotency-key': 'export-42' })
    const other = await post(test, '/licenses/usage', body, { 'idempotency-key': 'export-43' })

    assert.equal(first.json().uses, 5, first.body)
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal(retry.body, first.body)
    assert.equal(other.json().uses, 10, other.body)
  })

  it('answers 400 for an increment outside 1..1,000,000 or a maxUses below 1, and 404 for an unknown key', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, { productId })
    for (const increment of [0, -1, 1_000_001, 2.5, '1']) {
      expectProblem(
        await post(test, `/licenses/${license.id}/usage`, { increment }),
        400,
        'validation_failed',
      )
    }
    expectProblem(await post(test, '/licenses', { productId, maxUses: 0 }), 400, 'validation_failed')
    const unknown = await post(test, '/licenses/usage', { key: 'AAAAA-AAAAA-AAAAA-AAAAA-AAAAA', productId })
    expectProblem(unknown, 404, 'license_not_found')
    const patched = await test.app.inject({
      method: 'PATCH',
      url: `/api/v0/licenses/${license.id}`,
      headers: test.headers,
      payload: { maxUses: 3 },
    })
    assert.equal(patched.json().maxUses, 3, patched.body)
  })
})
