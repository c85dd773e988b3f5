import assert from 'node:assert/strict'
import { once } from 'node:events'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as wait } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'
import { buildApp } from '../app.js'
import { systemClock } from '../core/clock.js'
import { deriveSecretKeys } from '../core/secrets.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import { connect, parseDatabaseUrl } from '../storage/connect.js'
import { KyselyUnitOfWork } from '../storage/kysely-unit-of-work.js'
import { postgresServerEnvironment, testMasterSecret } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'
import { type ReceivedWebhook, startWebhookReceiver } from '../testing/webhook-receiver.js'

const adminKey = 'kt_admin_webhooks-across-processes-000001'
/** More than both processes can hold in flight at once (2 × inFlightPerProcess), so each claims in turn. */
const eventCount = 250
/** Delivery loops per process × deliveries claimed per tick (webhooks/delivery-worker.ts). */
const inFlightPerProcess = 4 * 25

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v0${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`)
  return text === '' ? {} : JSON.parse(text)
}

/** Waits (bounded) for work other processes do; `check` answers whether it is done. */
async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`)
    }
    await wait(50)
  }
}

/** Verifies every request with the standardwebhooks package; returns how often each event id came. */
function verifiedCounts(received: readonly ReceivedWebhook[], secret: string): Map<string, number> {
  const verifier = new Webhook(secret)
  const counts = new Map<string, number>()
  for (const webhook of received) {
    const event = verifier.verify(webhook.body, webhook.headers) as { id: string; type: string }
    assert.equal(webhook.headers['webhook-id'], event.id)
    assert.match(event.type, /^license\.(created|updated)$/)
    counts.set(event.id, (counts.get(event.id) ?? 0) + 1)
  }
  return counts
}

async function deliveredCount(base: string, endpointId: string): Promise<number> {
  const page = await call(
    base,
    'GET',
    `/webhook-endpoints/${endpointId}/deliveries?filter=status:eq:delivered&limit=1`,
  )
  return page.totalCount
}

/** This process's keyturn_webhook_deliveries_delivered_total. */
async function deliveredBy(base: string): Promise<number> {
  const text = await (await fetch(`${base.replace(/\/$/, '')}/metrics`)).text()
  const line = text.split('\n').find((row) => row.startsWith('keyturn_webhook_deliveries_delivered_total '))
  return Number(line?.split(' ')[1])
}

/**
 * Writes an endpoint, a license and `eventCount` events about it (license.created, then
 * license.updated, in one transaction, through the server's own unit of work) into the database the
 * server processes of `env` serve; returns the endpoint, its secret and the event ids.
 */
async function seedEvents(env: Record<string, string>, url: string) {
  const location = parseDatabaseUrl(env.KEYTURN_DATABASE_URL ?? '')
  assert.ok(location !== undefined)
  const connection = connect(location)
  try {
    const { app, services } = buildApp({
      db: connection.db,
      clock: systemClock,
      secretKeys: deriveSecretKeys(testMasterSecret),
      logger: false,
      webhooks: { allowHttp: true, allowPrivate: true },
    })
    const admin = await services.apiKeys.authenticate(adminKey)
    assert.ok(admin !== undefined)
    const { product } = await services.products.create(admin, { name: 'Shared' })
    const { endpoint, secret } = await services.webhooks.create(admin, { url, eventTypes: ['license.*'] })
    const created = await services.licenses.create(admin, { productId: product.id })
    const storage = new KyselyUnitOfWork({ db: connection.db, clock: systemClock, stores: () => ({}) })
    await storage.write(admin, async ({ events }) => {
      for (let i = 1; i < eventCount; i++) {
        events.record('license.updated', product.id, toLicenseResource(created))
      }
    })
    const rows = await connection.db
      .selectFrom('events')
      .select('id')
      .where('type', 'like', 'license.%')
      .execute()
    await app.close()
    return { endpointId: endpoint.id, secret, eventIds: new Set(rows.map((row) => row.id)) }
  } finally {
    await connection.close()
  }
}

const postgresUrl = process.env.TEST_POSTGRES_URL
const skip = postgresUrl ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')

// Any number of `keyturn serve` processes share the deliveries through the database.
describe('Webhook deliveries across two server processes on one PostgreSQL database', { skip }, () => {
  const environment = postgresServerEnvironment(postgresUrl ?? '')
  const serverEnv = async (t: TestContext, extra: Record<string, string> = {}) => ({
    ...(await environment.fresh(t)),
    KEYTURN_ADMIN_KEY: adminKey,
    KEYTURN_WEBHOOK_ALLOW_HTTP: 'true',
    KEYTURN_WEBHOOK_ALLOW_PRIVATE: 'true',
    ...extra,
  })

  it('delivers each of 250 events exactly once, signed, with both processes dispatching and delivering', async (t) => {
    const receiver = await startWebhookReceiver(t)
    const env = await serverEnv(t)
    const [a, b] = await Promise.all([startServerProcess(t, env), startServerProcess(t, env)])
    receiver.hold = true
    const { endpointId, secret, eventIds } = await seedEvents(env, receiver.url)
    // More requests in flight than one process can send at once: both are delivering.
    await until('both processes to deliver', () => receiver.held.length > inFlightPerProcess)
    receiver.release()

    await until(
      'every delivery recorded as delivered',
      async () => (await deliveredCount(b.url, endpointId)) === eventCount,
    )

    const counts = verifiedCounts(receiver.received, secret)
    assert.equal(counts.size, eventCount, 'every event reached the receiver')
    assert.deepEqual(
      [...counts.values()].filter((count) => count > 1),
      [],
      'none more than once',
    )
    assert.equal(receiver.received.length, eventCount)
    assert.deepEqual(new Set(counts.keys()), eventIds, 'exactly the events written')
    const [byA, byB] = await Promise.all([deliveredBy(a.url), deliveredBy(b.url)])
    assert.equal(byA + byB, eventCount)
    assert.ok(byA > 0 && byB > 0, `both processes delivered (${byA} + ${byB})`)
  })

  it('delivers every event after one process is killed with SIGKILL mid-delivery: its claims are sent again once their lease runs out', async (t) => {
    const receiver = await startWebhookReceiver(t)
    // Short, so the killed process's claims come free soon; long enough that under a loaded machine
    // the survivor records each of its own sends before its claim lapses (at 2 s, a full-suite run at
    // load ~15 saw the survivor send ten deliveries twice).
    const env = await serverEnv(t, { KEYTURN_WEBHOOK_LEASE_SECONDS: '6' })
    const [a, b] = await Promise.all([startServerProcess(t, env), startServerProcess(t, env)])
    receiver.hold = true // every request waits, unanswered, until release()
    const { endpointId, secret, eventIds } = await seedEvents(env, receiver.url)

    // More requests in flight than one process can send at once: both have deliveries in flight.
    await until(
      'both processes to have deliveries in flight',
      () => receiver.held.length > inFlightPerProcess,
    )
    const exited = once(a.child, 'exit')
    a.child.kill('SIGKILL')
    await exited
    // In flight at the kill: every request received and not answered (the killed process's, and the
    // survivor's, which are answered now and recorded as delivered).
    const inFlight = new Set(receiver.held.map((webhook) => webhook.headers['webhook-id']))
    receiver.release()

    await until(
      'every delivery recorded as delivered',
      async () => (await deliveredCount(b.url, endpointId)) === eventCount,
    )

    const counts = verifiedCounts(receiver.received, secret)
    assert.deepEqual(new Set(counts.keys()), eventIds, 'every event reached the receiver')
    const repeated = [...counts].filter(([, count]) => count > 1).map(([id]) => id)
    assert.ok(repeated.length > 0, 'the killed process had deliveries in flight: they were sent again')
    const order = receiver.received.map((webhook) => webhook.headers['webhook-id'])
    assert.deepEqual(
      repeated.filter((id) => !inFlight.has(id)).map((id) => [id, order.indexOf(id), order.lastIndexOf(id)]),
      [],
      `only deliveries in flight at the kill came twice (${inFlight.size} in flight, ${repeated.length} repeated)`,
    )
    assert.ok(
      [...counts.values()].every((count) => count <= 2),
      'none more than twice',
    )
    assert.equal(await deliveredBy(b.url), eventCount, 'the survivor recorded every delivery')
  })
})
