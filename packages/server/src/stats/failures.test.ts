import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { StatsFailures } from '@keyturn/protocol'
import { memoryCounters } from '../protection/counters.js'
import { buildTestApp, createProduct } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { expectProblem } from '../testing/licenses.js'
import { call, roleHeaders } from '../testing/vendors.js'
import { startWebhookReceiver } from '../testing/webhook-receiver.js'

describeEachDatabase('/api/v0/stats/failures', (database) => {
  it('lists the failing webhook deliveries and the rate-limited clients, scoped by product', async (t) => {
    const test = await buildTestApp(t, database, {
      webhooks: { allowHttp: true, allowPrivate: true },
      protection: {
        keyPerMinute: 20,
        ipPerMinute: 2,
        guessLimit: 0,
        guessBlockSeconds: 900,
        counters: memoryCounters(),
      },
    })
    const { app, headers, productId } = test
    const otherProduct = await createProduct(app, headers, 'Other')
    const failing = await startWebhookReceiver(t, 503)
    const working = await startWebhookReceiver(t, 200)
    const own = await call(app, headers, 'POST', '/webhook-endpoints', 201, {
      url: `${failing.url}/own`,
      eventTypes: ['license.created'],
      productId,
    })
    const global = await call(app, headers, 'POST', '/webhook-endpoints', 201, {
      url: `${failing.url}/global`,
      eventTypes: ['license.created'],
    })
    await call(app, headers, 'POST', '/webhook-endpoints', 201, {
      url: working.url,
      eventTypes: ['license.created'],
      productId,
    })
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId })
    await test.services.deliveries.tick()
    assert.equal(failing.received.length, 2)

    // A product key of the other product spends its minute's budget; a client key of this product
    // spends its address's.
    const greedy = await call(app, headers, 'POST', '/api-keys', 201, {
      name: 'greedy',
      role: 'product',
      productId: otherProduct,
    })
    const greedyHeaders = { authorization: `Bearer ${greedy.secret}` }
    const answers: number[] = []
    for (let i = 0; i < 22; i++) {
      answers.push(
        (await app.inject({ method: 'GET', url: '/api/v0/licenses', headers: greedyHeaders })).statusCode,
      )
    }
    assert.deepEqual(answers.slice(19), [200, 429, 429])
    const client = await roleHeaders(app, headers, 'client', productId)
    const statuses: number[] = []
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers: client,
        payload: { key: license.key, productId },
        remoteAddress: '203.0.113.9',
      })
      statuses.push(res.statusCode)
    }
    assert.deepEqual(statuses, [200, 200, 429])

    const all: StatsFailures = await call(app, headers, 'GET', '/stats/failures', 200)
    assert.equal(all.productId, null)
    const delivery = (endpoint: { id: string; url: string }) => ({
      endpointId: endpoint.id,
      endpointUrl: endpoint.url,
      eventType: 'license.created',
      status: 'pending',
      attempts: 1,
      lastResponseStatus: 503,
      lastError: 'The endpoint answered 503.',
      lastAttemptAt: test.clock.now().toISOString(),
    })
    const shown = (failures: StatsFailures) =>
      failures.webhookDeliveries
        .map(({ deliveryId, eventId, nextAttemptAt, ...rest }) => {
          assert.ok(deliveryId.startsWith('dlv_') && eventId.startsWith('evt_') && nextAttemptAt !== null)
          return rest
        })
        .sort((a, b) => a.endpointUrl.localeCompare(b.endpointUrl))
    assert.deepEqual(shown(all), [delivery(global), delivery(own)])
    const at = all.rateLimitedSince
    assert.deepEqual(
      all.rateLimited.map(({ firstRefusedAt, lastRefusedAt, ...rest }) => {
        assert.ok(firstRefusedAt >= at && lastRefusedAt >= firstRefusedAt)
        return rest
      }),
      [
        { budget: 'address', clientKind: 'address', client: '203.0.113.9', productId, refused: 1 },
        {
          budget: 'management',
          clientKind: 'apiKey',
          client: greedy.id,
          productId: otherProduct,
          refused: 2,
        },
      ],
    )

    // An admin asking for a product sees that product's events' deliveries; a product key only its
    // own endpoints' deliveries and its own keys' refusals.
    const forProduct: StatsFailures = await call(
      app,
      headers,
      'GET',
      `/stats/failures?productId=${productId}`,
      200,
    )
    assert.deepEqual(shown(forProduct), [delivery(global), delivery(own)])
    assert.deepEqual(
      forProduct.rateLimited.map((entry) => entry.client),
      ['203.0.113.9'],
    )
    const productKey = await roleHeaders(app, headers, 'product', productId)
    const mine: StatsFailures = await call(app, productKey, 'GET', '/stats/failures', 200)
    assert.equal(mine.productId, productId)
    assert.deepEqual(shown(mine), [delivery(own)])
    assert.deepEqual(
      mine.rateLimited.map((entry) => entry.client),
      ['203.0.113.9'],
    )
    expectProblem(
      await app.inject({
        method: 'GET',
        url: `/api/v0/stats/failures?productId=${otherProduct}`,
        headers: productKey,
      }),
      404,
      'product_not_found',
    )
    expectProblem(
      await app.inject({
        method: 'GET',
        url: '/api/v0/stats/failures',
        headers: client,
        remoteAddress: '198.51.100.4',
      }),
      403,
      'forbidden',
    )

    // Delivered at the next attempt: no longer failing.
    failing.status = 200
    test.clock.advance(3_600_000)
    await test.services.deliveries.tick()
    const after: StatsFailures = await call(app, headers, 'GET', '/stats/failures', 200)
    assert.deepEqual(after.webhookDeliveries, [])
  })
})
