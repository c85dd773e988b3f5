import assert from 'node:assert/strict'
import { it } from 'node:test'
import { type LicenseId, webhookRetrySchedule } from '@keyturn/protocol'
import { Webhook } from 'standardwebhooks'
import { deriveSecretKeys } from '../../core/secrets.js'
import { ValidationRecording } from '../../events/validation-recording.js'
import { KyselyUnitOfWork } from '../../storage/kysely-unit-of-work.js'
import { buildTestApp, createProduct, productKeyHeaders, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import type { AuthHeaders } from '../../testing/licenses.js'
import { assertProblem } from '../../testing/problems.js'
import { send } from '../../testing/requests.js'
import { testMasterSecret } from '../../testing/server-environments.js'
import { startWebhookReceiver } from '../../testing/webhook-receiver.js'
import { DeliveryWorker } from '../delivery-worker.js'
import { KyselyWebhookStore } from '../kysely-webhook-store.js'
import type { AttemptResult } from '../webhook-delivery.js'

const local = { webhooks: { allowHttp: true, allowPrivate: true } }

/** Waits (bounded) for what a tick in flight does meanwhile. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!done()) {
    assert.ok(Date.now() < deadline, 'timed out')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

async function createEndpoint(test: TestApp, body: object, headers: AuthHeaders = test.headers) {
  const res = await send(test, 'POST', '/webhook-endpoints', body, headers)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

describeEachDatabase('webhook endpoints', (database) => {
  it('creates, shows, changes, rotates and deletes an endpoint, the secret shown only on create and rotate', async (t) => {
    const test = await buildTestApp(t, database, local)
    const created = await createEndpoint(test, { url: 'https://example.com/hook', eventTypes: ['license.*'] })
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    const { secret, ...endpoint } = created
    assert.deepEqual(endpoint, {
      id: endpoint.id,
      object: 'WebhookEndpoint',
      url: 'https://example.com/hook',
      description: null,
      eventTypes: ['license.*'],
      productId: null,
      enabled: true,
      createdAt: '2030-01-01T00:00:00.000Z',
      updatedAt: '2030-01-01T00:00:00.000Z',
    })
    const got = await send(test, 'GET', `/webhook-endpoints/${endpoint.id}`)
    assert.deepEqual(got.json(), endpoint)
    assert.equal((await send(test, 'GET', '/webhook-endpoints')).json().totalCount, 1)

    const patched = await send(test, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
      enabled: false,
      eventTypes: ['*'],
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.equal(patched.json().enabled, false)
    const rotated = await send(test, 'POST', `/webhook-endpoints/${endpoint.id}/rotate-secret`)
    assert.equal(rotated.statusCode, 200, rotated.body)
    assert.notEqual(rotated.json().secret, secret)
    const stored = await test.connection.db
      .selectFrom('webhook_endpoints')
      .select('secret_encrypted')
      .executeTakeFirstOrThrow()
    assert.equal(
      stored.secret_encrypted.includes(rotated.json().secret.slice(6, 20)),
      false,
      'encrypted at rest',
    )

    assert.equal((await send(test, 'DELETE', `/webhook-endpoints/${endpoint.id}`)).statusCode, 204)
    assertProblem(
      await send(test, 'GET', `/webhook-endpoints/${endpoint.id}`),
      404,
      'webhook_endpoint_not_found',
    )
    const events = await send(
      test,
      'GET',
      '/events?filter=type:in:webhook_endpoint.created|webhook_endpoint.updated|webhook_endpoint.deleted&sort=occurredAt:asc',
    )
    assert.deepEqual(
      events.json().data.map((event: { type: string }) => event.type),
      [
        'webhook_endpoint.created',
        'webhook_endpoint.updated',
        'webhook_endpoint.updated',
        'webhook_endpoint.deleted',
      ],
    )
    assert.equal(events.body.includes('whsec_'), false, 'no secret in events')
  })

  it('refuses http:// unless allowed, bad patterns and unknown products with 400 or 404', async (t) => {
    const test = await buildTestApp(t, database)
    const http = await send(test, 'POST', '/webhook-endpoints', {
      url: 'http://example.com/hook',
      eventTypes: ['*'],
    })
    assert.equal(assertProblem(http, 400, 'validation_failed').errors?.[0]?.pointer, '#/url')
    assertProblem(
      await send(test, 'POST', '/webhook-endpoints', { url: 'https://example.com', eventTypes: ['license'] }),
      400,
      'validation_failed',
    )
    assertProblem(
      await send(test, 'POST', '/webhook-endpoints', { url: 'https://example.com', eventTypes: [] }),
      400,
      'validation_failed',
    )
    assertProblem(
      await send(test, 'POST', '/webhook-endpoints', {
        url: 'https://example.com',
        eventTypes: ['*'],
        productId: 'prd_nope',
      }),
      404,
      'product_not_found',
    )
    assertProblem(
      await send(test, 'PATCH', '/webhook-endpoints/whk_nope', { enabled: true }),
      404,
      'webhook_endpoint_not_found',
    )
    assertProblem(
      await send(test, 'POST', '/webhook-deliveries/dlv_nope/retry'),
      404,
      'webhook_delivery_not_found',
    )
  })

  it('lets a product key manage only its product’s endpoints, and a client key none', async (t) => {
    const test = await buildTestApp(t, database)
    const other = await createProduct(test.app, test.headers)
    const mine = await productKeyHeaders(test.app, test.headers, test.productId)
    const client = await send(test, 'POST', '/api-keys', {
      name: 'app',
      role: 'client',
      productId: test.productId,
    })
    const clientHeaders = { authorization: `Bearer ${client.json().secret}` }

    const own = await createEndpoint(test, { url: 'https://example.com/a', eventTypes: ['*'] }, mine)
    assert.equal(own.productId, test.productId, 'a product key’s endpoint is scoped to its product')
    const global = await createEndpoint(test, { url: 'https://example.com/b', eventTypes: ['*'] })
    const foreign = await createEndpoint(test, {
      url: 'https://example.com/c',
      eventTypes: ['*'],
      productId: other,
    })

    assertProblem(
      await send(
        test,
        'POST',
        '/webhook-endpoints',
        { url: 'https://example.com', eventTypes: ['*'], productId: other },
        mine,
      ),
      403,
      'forbidden',
    )
    assert.deepEqual(
      (await send(test, 'GET', '/webhook-endpoints', undefined, mine))
        .json()
        .data.map((e: { id: string }) => e.id),
      [own.id],
    )
    for (const hidden of [global.id, foreign.id]) {
      assertProblem(
        await send(test, 'GET', `/webhook-endpoints/${hidden}`, undefined, mine),
        404,
        'webhook_endpoint_not_found',
      )
      assertProblem(
        await send(test, 'DELETE', `/webhook-endpoints/${hidden}`, undefined, mine),
        404,
        'webhook_endpoint_not_found',
      )
    }
    assertProblem(await send(test, 'GET', '/webhook-endpoints', undefined, clientHeaders), 403, 'forbidden')
    assertProblem(
      await send(
        test,
        'POST',
        '/webhook-endpoints',
        { url: 'https://example.com', eventTypes: ['*'] },
        clientHeaders,
      ),
      403,
      'forbidden',
    )
  })
})

describeEachDatabase('webhook deliveries', (database) => {
  it('delivers each event to a real receiver, verified by the standardwebhooks package, body equal to the stored event', async (t) => {
    const test = await buildTestApp(t, database, local)
    test.clock.set(new Date().toISOString()) // standardwebhooks checks the timestamp against the real time
    const receiver = await startWebhookReceiver(t)
    const { id: endpointId, secret } = await createEndpoint(test, {
      url: receiver.url,
      eventTypes: ['license.*'],
    })
    const license = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    await send(test, 'POST', `/licenses/${license.id}/revoke`)
    await send(test, 'POST', '/products', { name: 'not subscribed' })

    const tick = await test.services.deliveries.tick()

    assert.deepEqual(
      { ...tick, dispatched: undefined },
      { dispatched: undefined, attempted: 2, delivered: 2 },
    )
    assert.equal(receiver.received.length, 2)
    const verifier = new Webhook(secret)
    for (const delivery of receiver.received) {
      const verified = verifier.verify(delivery.body, delivery.headers) as { id: string }
      assert.equal(delivery.headers['webhook-id'], verified.id)
      assert.match(delivery.headers['user-agent'] ?? '', /^Keyturn-Webhooks\/\d+\.\d+\.\d+/)
      const stored = await send(test, 'GET', `/events/${verified.id}`)
      assert.deepEqual(JSON.parse(delivery.body), stored.json())
    }
    assert.deepEqual(receiver.received.map((delivery) => JSON.parse(delivery.body).type).sort(), [
      'license.created',
      'license.revoked',
    ])
    const deliveries = (
      await send(test, 'GET', `/webhook-endpoints/${endpointId}/deliveries?filter=status:eq:delivered`)
    ).json()
    assert.equal(deliveries.totalCount, 2)
    assert.equal(deliveries.data[0].attempts, 1)
    assert.equal(deliveries.data[0].lastResponseStatus, 200)
    assert.deepEqual(await test.services.deliveries.tick(), { dispatched: 0, attempted: 0, delivered: 0 })

    const tested = await send(test, 'POST', `/webhook-endpoints/${endpointId}/test`)
    assert.equal(tested.statusCode, 202, tested.body)
    await test.services.deliveries.tick()
    assert.equal(JSON.parse(receiver.received[2]?.body ?? '{}').type, 'webhook_endpoint.test')
  })

  it('stores an event committed while no endpoint is enabled as already dispatched; an endpoint enabled later gets only newer events', async (t) => {
    const test = await buildTestApp(t, database, local)
    const receiver = await startWebhookReceiver(t)
    const dispatchedAt = async (licenseId: string) => {
      const row = await test.connection.db
        .selectFrom('events')
        .select('dispatched_at')
        .where('type', '=', 'license.created')
        .where('license_id', '=', licenseId as LicenseId)
        .executeTakeFirstOrThrow()
      return row.dispatched_at
    }
    const beforeAny = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    const endpoint = await createEndpoint(test, { url: receiver.url, eventTypes: ['license.*'] })
    await send(test, 'PATCH', `/webhook-endpoints/${endpoint.id}`, { enabled: false })
    const whileDisabled = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    assert.notEqual(await dispatchedAt(beforeAny.id), null, 'no endpoint: dispatched with its commit')
    assert.notEqual(await dispatchedAt(whileDisabled.id), null, 'only a disabled endpoint: likewise')

    await send(test, 'PATCH', `/webhook-endpoints/${endpoint.id}`, { enabled: true })
    const whileEnabled = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    assert.equal(await dispatchedAt(whileEnabled.id), null, 'an enabled endpoint: left to the dispatch')
    await test.services.deliveries.tick()
    assert.deepEqual(
      receiver.received.map((delivery) => JSON.parse(delivery.body).data.id),
      [whileEnabled.id],
    )
  })

  it('retries on the schedule while the receiver is down, then delivers once; retry-now resends', async (t) => {
    const test = await buildTestApp(t, database, local)
    const receiver = await startWebhookReceiver(t, 503)
    const { id: endpointId } = await createEndpoint(test, {
      url: receiver.url,
      eventTypes: ['license.created'],
    })
    await send(test, 'POST', '/licenses', { productId: test.productId })
    const deliveryOf = async () =>
      (await send(test, 'GET', `/webhook-endpoints/${endpointId}/deliveries`)).json().data[0]

    for (const [index, seconds] of webhookRetrySchedule.slice(0, 3).entries()) {
      const before = test.clock.now().getTime()
      assert.equal((await test.services.deliveries.tick()).attempted, 1)
      const delivery = await deliveryOf()
      assert.equal(delivery.status, 'pending')
      assert.equal(delivery.attempts, index + 1)
      assert.equal(delivery.lastResponseStatus, 503)
      assert.equal(delivery.lastResponseBody.length, 1024, 'the body kept is cut to 1 KiB')
      const wait = new Date(delivery.nextAttemptAt).getTime() - before
      assert.ok(wait >= seconds * 900 && wait <= seconds * 1100, `attempt ${index + 1}: next in ${wait} ms`)
      assert.equal((await test.services.deliveries.tick()).attempted, 0, 'nothing is due before its time')
      test.clock.set(delivery.nextAttemptAt)
    }
    receiver.status = 200
    assert.deepEqual(await test.services.deliveries.tick(), { dispatched: 0, attempted: 1, delivered: 1 })
    assert.equal((await deliveryOf()).status, 'delivered')
    assert.equal(receiver.received.length, 4)
    test.clock.advance(24 * 60 * 60 * 1000)
    assert.equal((await test.services.deliveries.tick()).attempted, 0, 'delivered once')

    const retried = await send(test, 'POST', `/webhook-deliveries/${(await deliveryOf()).id}/retry`)
    assert.equal(retried.statusCode, 200, retried.body)
    assert.equal(retried.json().status, 'pending')
    assert.equal((await test.services.deliveries.tick()).delivered, 1)
    assert.equal(receiver.received.length, 5)
  })

  it('does not claim again a delivery its own process is still sending after the lease ran out; another process may', async (t) => {
    const test = await buildTestApp(t, database, local)
    await createEndpoint(test, { url: 'https://example.com/slow', eventTypes: ['license.created'] })
    await send(test, 'POST', '/licenses', { productId: test.productId })
    const answers: ((result: AttemptResult) => void)[] = []
    const sent: string[] = []
    const slowSender = {
      send: (request: { readonly id: string }) => {
        sent.push(request.id)
        return new Promise<AttemptResult>((resolve) => answers.push(resolve))
      },
    }
    const worker = (leaseMs: number) =>
      new DeliveryWorker({
        webhooks: new KyselyWebhookStore(test.connection.db),
        storage: new KyselyUnitOfWork({
          db: test.connection.db,
          clock: test.clock,
          stores: (trx) => ({ webhooks: new KyselyWebhookStore(trx) }),
        }),
        sender: slowSender,
        clock: test.clock,
        secretEncryption: deriveSecretKeys(testMasterSecret).webhookSecretEncryption,
        validationRecording: new ValidationRecording(false),
        leaseMs,
      })
    const first = worker(1_000)

    const slow = first.tick()
    await until(() => sent.length === 1)
    test.clock.advance(2_000)
    assert.deepEqual(await first.tick(), { dispatched: 0, attempted: 0, delivered: 0 }, 'not again by itself')
    const other = worker(1_000).tick()
    await until(() => sent.length === 2)
    assert.equal(sent[1], sent[0], 'another process takes the expired lease over')
    for (const answer of answers) {
      answer({ kind: 'answered', status: 200, body: 'ok' })
    }
    assert.deepEqual(
      (await Promise.all([slow, other])).map((tick) => tick.delivered),
      [0, 1],
      'the outcome is recorded by the lease holder only',
    )
  })

  it('disables an endpoint whose deliveries have all failed for 5 days, emitting webhook_endpoint.disabled', async (t) => {
    const test = await buildTestApp(t, database, local)
    const receiver = await startWebhookReceiver(t, 500)
    const { id: endpointId } = await createEndpoint(test, {
      url: receiver.url,
      eventTypes: ['license.created'],
    })
    await send(test, 'POST', '/licenses', { productId: test.productId })
    for (let attempt = 0; attempt <= webhookRetrySchedule.length; attempt++) {
      await test.services.deliveries.tick()
      test.clock.advance(11 * 60 * 60 * 1000)
    }
    const first = (await send(test, 'GET', `/webhook-endpoints/${endpointId}/deliveries`)).json().data[0]
    assert.equal(first.status, 'failed')
    assert.equal(first.attempts, webhookRetrySchedule.length + 1)
    assert.equal(first.nextAttemptAt, null)
    assert.equal(
      (await send(test, 'GET', `/webhook-endpoints/${endpointId}`)).json().enabled,
      true,
      'not yet 5 days',
    )

    test.clock.advance(2 * 24 * 60 * 60 * 1000)
    await send(test, 'POST', '/licenses', { productId: test.productId })
    await test.services.deliveries.tick()

    assert.equal((await send(test, 'GET', `/webhook-endpoints/${endpointId}`)).json().enabled, false)
    const disabled = (await send(test, 'GET', '/events?filter=type:eq:webhook_endpoint.disabled')).json().data
    assert.equal(disabled.length, 1)
    assert.deepEqual(disabled[0].actor, { type: 'system', id: 'webhook-deliveries' })
    assert.equal(disabled[0].requestId, null)
    const sent = receiver.received.length
    await send(test, 'POST', '/licenses', { productId: test.productId })
    test.clock.advance(60_000)
    await test.services.deliveries.tick()
    assert.equal(receiver.received.length, sent, 'a disabled endpoint gets nothing')
  })

  it('refuses loopback and private targets by default, also a hostname that resolves to 127.0.0.1', async (t) => {
    const test = await buildTestApp(t, database, { webhooks: { allowHttp: true, allowPrivate: false } })
    const receiver = await startWebhookReceiver(t)
    const targets = [
      receiver.url,
      `http://localhost:${receiver.port}/hooks`,
      'http://169.254.169.254/latest',
      'http://[::1]:9/x',
    ]
    for (const url of targets) {
      await createEndpoint(test, { url, eventTypes: ['license.created'] })
    }
    await send(test, 'POST', '/licenses', { productId: test.productId })

    const tick = await test.services.deliveries.tick()

    assert.deepEqual(
      { ...tick, dispatched: undefined },
      { dispatched: undefined, attempted: 4, delivered: 0 },
    )
    assert.equal(receiver.received.length, 0)
    const failures = await test.connection.db.selectFrom('webhook_deliveries').select('last_error').execute()
    for (const { last_error } of failures) {
      assert.match(last_error ?? '', /^Refused: /)
    }
  })

  it('records validation outcomes while an enabled endpoint subscribes to them, and only then', async (t) => {
    const test = await buildTestApp(t, database, local)
    const { key } = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    const validate = () => send(test, 'POST', '/licenses/validate', { key, productId: test.productId })
    const validations = async () =>
      (await send(test, 'GET', '/events?filter=type:eq:license.validated')).json().totalCount

    await validate()
    const { id } = await createEndpoint(test, {
      url: 'https://example.com/v',
      eventTypes: ['license.validated'],
    })
    await validate()
    await send(test, 'PATCH', `/webhook-endpoints/${id}`, { enabled: false })
    await validate()

    assert.equal(await validations(), 1)
  })
})
