import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startWebhookReceiver } from '../testing/webhook-receiver.js'
import { EventRetention, retentionSweepIntervalMs } from './event-retention.js'
import { KyselyEventStore } from './kysely-event-store.js'

const day = 24 * 60 * 60 * 1000

async function post(test: TestApp, url: string, payload: object) {
  const res = await test.app.inject({ method: 'POST', url: `/api/v0${url}`, headers: test.headers, payload })
  assert.ok(res.statusCode < 300, res.body)
  return res.json()
}

/** The events left, oldest first, as `type` (with the license id for license events). */
async function eventsLeft(test: TestApp): Promise<string[]> {
  const rows = await test.connection.db
    .selectFrom('events')
    .select(['type', 'data'])
    .orderBy('occurred_at')
    .orderBy('id')
    .execute()
  return rows.map((row) => {
    const data = (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as { id?: string }
    return row.type.startsWith('license.') ? `${row.type} ${data.id}` : row.type
  })
}

describeEachDatabase('event retention', (database) => {
  it('removes events past the retention in bounded sweeps, keeping those a webhook delivery still waits for', async (t) => {
    const test = await buildTestApp(t, database, { webhooks: { allowHttp: true, allowPrivate: true } })
    const receiver = await startWebhookReceiver(t)
    await post(test, '/webhook-endpoints', { url: receiver.url, eventTypes: ['license.*'] })
    for (let i = 0; i < 3; i++) {
      await post(test, '/licenses', { productId: test.productId })
    }
    assert.equal((await test.services.deliveries.tick()).delivered, 3)
    receiver.status = 503
    const waiting = await post(test, '/licenses', { productId: test.productId })
    assert.equal((await test.services.deliveries.tick()).delivered, 0, 'its delivery stays pending')
    await post(test, '/products', { name: 'not dispatched yet' })
    const oldEvents = await eventsLeft(test)
    test.clock.advance(90 * day + 1)
    const recent = await post(test, '/licenses', { productId: test.productId })
    const retention = new EventRetention({
      events: new KyselyEventStore(test.connection.db),
      clock: test.clock,
      retentionDays: 90,
      batchSize: 2,
      maxBatches: 2,
    })
    // Removable: every old event but the one with a pending delivery and the undispatched one.
    const removable = oldEvents.length - 2
    assert.ok(removable > 4, `${removable} old events to remove`)

    assert.equal(await retention.tick(), 4, 'at most batchSize × maxBatches per sweep')
    assert.equal(await retention.tick(), 0, 'no sweep before the interval')
    test.clock.advance(retentionSweepIntervalMs)
    assert.equal(await retention.tick(), Math.min(4, removable - 4))
    while ((await eventsLeft(test)).length > 3) {
      test.clock.advance(retentionSweepIntervalMs)
      assert.ok((await retention.tick()) > 0)
    }
    assert.deepEqual(await eventsLeft(test), [
      `license.created ${waiting.id}`,
      'product.created',
      `license.created ${recent.id}`,
    ])

    receiver.status = 200
    const tick = await test.services.deliveries.tick()
    assert.deepEqual(
      { ...tick, dispatched: undefined },
      { dispatched: undefined, attempted: 2, delivered: 2 },
    )
    test.clock.advance(retentionSweepIntervalMs)
    assert.equal(await retention.tick(), 2, 'delivered and dispatched now: removed')
    assert.deepEqual(await eventsLeft(test), [`license.created ${recent.id}`])
    assert.equal(
      (
        await test.app.inject({
          method: 'GET',
          url: `/api/v0/events?filter=type:eq:product.created`,
          headers: test.headers,
        })
      ).json().totalCount,
      0,
    )
  })
})
