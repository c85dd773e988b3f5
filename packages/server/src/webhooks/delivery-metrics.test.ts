import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startWebhookReceiver } from '../testing/webhook-receiver.js'

/** The keyturn_webhook_* samples of one scrape, by name. */
async function webhookMetrics(test: TestApp): Promise<Record<string, number>> {
  const res = await test.app.inject({ method: 'GET', url: '/metrics' })
  assert.equal(res.statusCode, 200, res.body)
  return Object.fromEntries(
    res.body
      .split('\n')
      .filter((line) => line.startsWith('keyturn_webhook_'))
      .map((line) => {
        const [name = '', value = ''] = line.split(' ')
        return [name, Number(value)]
      }),
  )
}

async function post(test: TestApp, url: string, payload: object) {
  const res = await test.app.inject({ method: 'POST', url: `/api/v0${url}`, headers: test.headers, payload })
  assert.ok(res.statusCode < 300, res.body)
  return res.json()
}

describeEachDatabase('webhook delivery metrics', (database) => {
  it('counts delivered and failed attempts and shows the pending backlog and its age as deliveries fail and succeed', async (t) => {
    const test = await buildTestApp(t, database, { webhooks: { allowHttp: true, allowPrivate: true } })
    const receiver = await startWebhookReceiver(t, 503)
    await post(test, '/webhook-endpoints', { url: receiver.url, eventTypes: ['license.created'] })
    assert.deepEqual(await webhookMetrics(test), {
      keyturn_webhook_deliveries_delivered_total: 0,
      keyturn_webhook_delivery_failed_attempts_total: 0,
      keyturn_webhook_deliveries_pending: 0,
      keyturn_webhook_oldest_pending_delivery_age_seconds: 0,
      keyturn_webhook_events_undispatched: 1, // recorded before any tick (the test's setup)
    })

    await post(test, '/licenses', { productId: test.productId })
    await post(test, '/licenses', { productId: test.productId })
    await test.services.deliveries.tick()
    test.clock.advance(90_000)

    assert.deepEqual(await webhookMetrics(test), {
      keyturn_webhook_deliveries_delivered_total: 0,
      keyturn_webhook_delivery_failed_attempts_total: 2,
      keyturn_webhook_deliveries_pending: 2,
      keyturn_webhook_oldest_pending_delivery_age_seconds: 90,
      keyturn_webhook_events_undispatched: 0,
    })

    receiver.status = 200
    await test.services.deliveries.tick()

    assert.deepEqual(await webhookMetrics(test), {
      keyturn_webhook_deliveries_delivered_total: 2,
      keyturn_webhook_delivery_failed_attempts_total: 2,
      keyturn_webhook_deliveries_pending: 0,
      keyturn_webhook_oldest_pending_delivery_age_seconds: 0,
      keyturn_webhook_events_undispatched: 0,
    })
  })
})
