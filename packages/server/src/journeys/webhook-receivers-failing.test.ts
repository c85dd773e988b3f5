import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { describe, it } from 'node:test'
import { sqliteServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'
import { startWebhookReceiver } from '../testing/webhook-receiver.js'

const adminKey = 'kt_admin_webhook-receivers-failing-key-01'

/** A loopback port nothing listens on: connections to it are refused. */
function refusingPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/**
 * Webhook receivers that hang (accept the request, never answer) or refuse connections, under a
 * running `keyturn serve`: deliveries run in the background, so requests that record events answer
 * at their usual speed, and the backlog shows in /metrics and drains once the receiver answers.
 */
describe('webhook receivers failing', () => {
  it('never slow down the requests that record events; the backlog drains once the receiver answers', async (t) => {
    const receiver = await startWebhookReceiver(t)
    receiver.hold = true
    const env = await sqliteServerEnvironment().fresh(t)
    const keyturn = await startServerProcess(t, {
      ...env,
      KEYTURN_ADMIN_KEY: adminKey,
      KEYTURN_WEBHOOK_ALLOW_HTTP: 'true',
      KEYTURN_WEBHOOK_ALLOW_PRIVATE: 'true',
    })
    const call = async (method: string, path: string, body?: unknown) => {
      const started = performance.now()
      const res = await fetch(`${keyturn.url}/api/v0${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      const json = (await res.json()) as Record<string, unknown>
      return { status: res.status, body: json, ms: performance.now() - started }
    }
    const metric = async (name: string) => {
      const text = await (await fetch(`${keyturn.url}/metrics`)).text()
      const line = text.split('\n').find((row) => row.startsWith(`${name} `))
      return Number(line?.split(' ')[1])
    }
    const until = async (what: string, check: () => Promise<boolean> | boolean) => {
      const deadline = performance.now() + 15_000
      while (!(await check())) {
        assert.ok(performance.now() < deadline, `timed out waiting for ${what}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }

    const product = await call('POST', '/products', { name: 'Receivers' })
    const productId = product.body.id as string
    const hanging = await call('POST', '/webhook-endpoints', { url: receiver.url, eventTypes: ['license.*'] })
    assert.equal(hanging.status, 201, JSON.stringify(hanging.body))
    const refused = `http://127.0.0.1:${await refusingPort()}/hooks`
    assert.equal(
      (await call('POST', '/webhook-endpoints', { url: refused, eventTypes: ['license.*'] })).status,
      201,
    )

    const first = await call('POST', '/licenses', { productId })
    assert.equal(first.status, 201)
    await until('a delivery to hang', () => receiver.held.length > 0)

    // The receiver holds its delivery (a delivery attempt may last 10 s); requests go on.
    const answers = []
    for (let n = 0; n < 10; n++) {
      answers.push(await call('POST', '/licenses', { productId }))
      answers.push(await call('POST', '/licenses/validate', { key: first.body.key, productId }))
    }
    for (const answer of answers) {
      assert.ok(answer.status === 201 || answer.status === 200, JSON.stringify(answer.body))
      assert.ok(answer.ms < 1000, `answered in ${Math.round(answer.ms)} ms`)
    }
    assert.ok(receiver.held.length > 0, 'the receiver was still hanging meanwhile')
    // The backlog shows: deliveries waiting, and events not yet dispatched into deliveries.
    const backlog =
      (await metric('keyturn_webhook_deliveries_pending')) +
      (await metric('keyturn_webhook_events_undispatched'))
    assert.ok(backlog >= 10, `a backlog of ${backlog}`)
    await until(
      'a refused delivery attempt',
      async () => (await metric('keyturn_webhook_delivery_failed_attempts_total')) > 0,
    )

    // The receiver answers again: every license.created reaches it (the refused endpoint's
    // deliveries wait for their retries).
    receiver.release()
    const created = () =>
      new Set(
        receiver.received
          .filter((webhook) => webhook.body.includes('"type":"license.created"'))
          .map((webhook) => webhook.headers['webhook-id']),
      ).size
    await until('the backlog to drain', () => created() === 11)
    assert.equal(keyturn.child.exitCode, null)
  })
})
