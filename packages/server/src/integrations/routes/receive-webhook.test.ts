import assert from 'node:assert/strict'
import { it } from 'node:test'
import Stripe from 'stripe'
import { memoryCounters } from '../../protection/counters.js'
import { buildTestApp, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import {
  lemonSqueezySignature,
  mailed,
  paddleSignature,
  providerFixture,
  stripeSignature,
  withMail,
} from '../../testing/payment-providers.js'

// An `order_created` delivery shaped as Lemon Squeezy documents it (docs.lemonsqueezy.com, "Webhooks"
// → "Example payloads", trimmed to the fields Keyturn reads).
const orderCreated = providerFixture('lemonsqueezy-order-created.json')
const secret = 'ls-webhook-signing-secret'
// A `checkout.session.completed` event shaped as Stripe documents it (docs.stripe.com/api/events and
// /api/checkout/sessions/object, trimmed), at the API version the `stripe` SDK is pinned to.
const checkoutCompleted = providerFixture('stripe-checkout-session-completed.json')
const stripeSecret = 'whsec_stripe_fixture_secret'

function sign(body: string, key = secret): string {
  return lemonSqueezySignature(body, key)
}

async function integration(
  test: TestApp,
  provider = 'lemonsqueezy',
  signingSecret = secret,
  mappings: readonly { providerItemId: string; productId: string; policyId: string }[] = [],
): Promise<string> {
  const res = await test.app.inject({
    method: 'POST',
    url: '/api/v0/integrations',
    headers: test.headers,
    payload: { provider, signingSecret, mappings },
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

/** Posts deliveries to the integration's webhook route: `signature` in the provider's header, if any. */
function webhookPoster(test: TestApp, id: string, signatureHeader: string, fixture: string) {
  return (signature: string | undefined, body = fixture) =>
    test.app.inject({
      method: 'POST',
      url: `/api/v0/integrations/${id}/webhook`,
      headers: {
        'content-type': 'application/json',
        ...(signature === undefined ? {} : { [signatureHeader]: signature }),
      },
      payload: body,
    })
}

/** The integration's received events, as the API lists them. */
async function receivedEvents(
  test: TestApp,
  id: string,
): Promise<{ dedupeKey: string; eventType: string; status: string; outcome: string }[]> {
  const res = await test.app.inject({
    method: 'GET',
    url: `/api/v0/integrations/${id}/events`,
    headers: test.headers,
  })
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

describeEachDatabase('receiving Lemon Squeezy webhooks', (database) => {
  it('records a signed event once under 10 concurrent deliveries over HTTP; a bad signature or body records nothing', async (t) => {
    const test = await buildTestApp(t, database)
    const id = await integration(test)
    const base = await test.app.listen({ port: 0, host: '127.0.0.1' })
    const url = `${base}/api/v0/integrations/${id}/webhook`
    const post = (body: Buffer | string, signature: string | undefined) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(signature === undefined ? {} : { 'x-signature': signature }),
        },
        body,
      })

    const badSignature = await post(orderCreated, sign(orderCreated, 'another-secret'))
    assert.equal(badSignature.status, 400)
    assert.equal(((await badSignature.json()) as { code: string }).code, 'provider_signature_invalid')
    assert.equal((await post(orderCreated, undefined)).status, 400)
    const notJson = await post('{"meta":', sign('{"meta":'))
    assert.equal(notJson.status, 400)
    assert.equal(((await notJson.json()) as { code: string }).code, 'bad_request')

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(orderCreated, sign(orderCreated))),
    )
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(200),
    )
    const receipts = (await Promise.all(answers.map((a) => a.json()))) as { duplicate: boolean }[]
    assert.equal(receipts.filter((r) => r.duplicate === false).length, 1)

    const events = await receivedEvents(test, id)
    assert.deepEqual(
      events.map((e) => [e.dedupeKey, e.eventType, e.status]),
      [['order_created:1:2021-08-17T09:45:53.000000Z', 'order_created', 'ignored']],
    )
    assert.match(events[0]?.outcome ?? '', /Item 1 is not mapped; nothing was created/)
    const customers = await test.app.inject({
      method: 'GET',
      url: '/api/v0/customers',
      headers: test.headers,
    })
    assert.deepEqual(customers.json().data, [])
  })

  it('counts deliveries in a budget of their integration, not of the address they come from', async (t) => {
    const test = await buildTestApp(t, database, {
      protection: {
        keyPerMinute: 1000,
        ipPerMinute: 1,
        receiverPerMinute: 2,
        guessLimit: 0,
        guessBlockSeconds: 900,
        counters: memoryCounters(),
      },
    })
    const id = await integration(test)
    const deliver = () =>
      test.app.inject({
        method: 'POST',
        url: `/api/v0/integrations/${id}/webhook`,
        remoteAddress: '203.0.113.5',
        headers: { 'content-type': 'application/json', 'x-signature': sign(orderCreated) },
        payload: orderCreated,
      })
    const statuses = [(await deliver()).statusCode, (await deliver()).statusCode]
    const refused = await deliver()
    assert.deepEqual([...statuses, refused.statusCode], [200, 200, 429])
    assert.equal(refused.headers['ratelimit-limit'], '2')
    // The address's own budget is untouched by the deliveries.
    const docs = await test.app.inject({ url: '/openapi.json', remoteAddress: '203.0.113.5' })
    assert.equal(docs.statusCode, 200)
  })

  it('turns a mapped order into a customer for the buyer and one license on the policy, once under 10 concurrent deliveries, mails its key; its refund revokes it once', async (t) => {
    const { smtp, test } = await withMail(t, database)
    const policy = await test.app.inject({
      method: 'POST',
      url: '/api/v0/policies',
      headers: test.headers,
      payload: {
        productId: test.productId,
        name: 'Two years',
        duration: 2 * 365 * 86_400,
        maxActivations: 2,
      },
    })
    assert.equal(policy.statusCode, 201, policy.body)
    const policyId = policy.json().id
    const id = await integration(test, 'lemonsqueezy', secret, [
      { providerItemId: '1', productId: test.productId, policyId },
    ])
    const base = await test.app.listen({ port: 0, host: '127.0.0.1' })
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(`${base}/api/v0/integrations/${id}/webhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-signature': sign(orderCreated) },
          body: orderCreated,
        }),
      ),
    )
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(200),
    )

    const customers = await test.app.inject({
      method: 'GET',
      url: '/api/v0/customers',
      headers: test.headers,
    })
    assert.deepEqual(
      customers.json().data.map((c: { email: string; name: string }) => [c.email, c.name]),
      [['darlene@example.com', 'Darlene Example']],
    )
    const licenses = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: test.headers })
    const bought = licenses.json().data
    assert.equal(bought.length, 1)
    assert.equal(bought[0].customerId, customers.json().data[0].id)
    assert.equal(bought[0].policyId, policyId)
    assert.equal(bought[0].maxActivations, 2)
    assert.equal(bought[0].expirationDate, '2032-01-01T00:00:00.000Z') // 730 days from 2030-01-01
    // The key is mailed to the buyer through the outbox, once.
    const mails = await mailed(test, smtp)
    assert.deepEqual(
      mails.map((mail) => mail.to),
      [['darlene@example.com']],
    )
    assert.ok(mails[0]?.body.includes(bought[0].key), 'the key is in the mail')
    const [event] = await receivedEvents(test, id)
    assert.equal(event?.status, 'processed')
    assert.match(event?.outcome ?? '', new RegExp(`Created license ${bought[0].id}`))
    // The license names the provider's order it was sold through (admin keys).
    const links = await test.app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${bought[0].id}/provider-links`,
      headers: test.headers,
    })
    assert.deepEqual(
      links
        .json()
        .data.map((link: { provider: string; objectKind: string; objectId: string }) => [
          link.provider,
          link.objectKind,
          link.objectId,
        ]),
      [['lemonsqueezy', 'order', '1']],
    )

    // The same order refunded (Lemon Squeezy sends the order again as `order_refunded`): the
    // license is revoked once, however often the refund is delivered.
    const order = JSON.parse(orderCreated)
    order.meta.event_name = 'order_refunded'
    order.data.attributes.refunded = true
    order.data.attributes.refunded_at = '2021-08-20T10:00:00.000000Z'
    order.data.attributes.updated_at = '2021-08-20T10:00:00.000000Z'
    const refunded = JSON.stringify(order)
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/api/v0/integrations/${id}/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-signature': sign(refunded) },
        body: refunded,
      })
      assert.equal(res.status, 200)
    }
    const after = await test.app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${bought[0].id}`,
      headers: test.headers,
    })
    assert.equal(after.json().status, 'revoked')
    const revocations = await test.connection.db
      .selectFrom('events')
      .select('type')
      .where('license_id', '=', bought[0].id)
      .where('type', '=', 'license.revoked')
      .execute()
    assert.equal(revocations.length, 1)
  })
})

describeEachDatabase('receiving Stripe webhooks', (database) => {
  it('verifies with the stripe SDK at the server clock: a fresh signature records the event once, a stale or wrong one nothing', async (t) => {
    const test = await buildTestApp(t, database)
    const policy = await test.app.inject({
      method: 'POST',
      url: '/api/v0/policies',
      headers: test.headers,
      payload: { productId: test.productId, name: 'Perpetual' },
    })
    const id = await integration(test, 'stripe', stripeSecret, [
      { providerItemId: 'price_1PqR2sT3uV4wX5yZ', productId: test.productId, policyId: policy.json().id },
    ])
    const post = webhookPoster(test, id, 'stripe-signature', checkoutCompleted)
    const signedAt = (seconds: number, key = stripeSecret, payload = checkoutCompleted) =>
      stripeSignature(seconds, payload, key)
    const now = Math.floor(test.clock.now().getTime() / 1000)

    const stale = await post(signedAt(now - 301))
    assert.equal(stale.statusCode, 400, stale.body)
    assert.equal(stale.json().code, 'provider_signature_invalid')
    assert.equal((await post(signedAt(now, 'whsec_another'))).json().code, 'provider_signature_invalid')
    assert.equal((await post(undefined)).statusCode, 400)
    const malformed = await post(signedAt(now, stripeSecret, '{"id":'), '{"id":')
    assert.equal(malformed.statusCode, 400, malformed.body)
    assert.equal(malformed.json().code, 'bad_request')

    const answers = await Promise.all(Array.from({ length: 10 }, () => post(signedAt(now - 60))))
    assert.deepEqual(answers.map((a) => [a.statusCode, a.json().duplicate]).sort(), [
      [200, false],
      ...Array(9).fill([200, true]),
    ])
    assert.deepEqual(
      (await receivedEvents(test, id)).map((e) => [e.dedupeKey, e.eventType]),
      [['evt_1QfixtureCheckoutCompleted', 'checkout.session.completed']],
    )
    // The paid session's metadata.keyturn_price is mapped: one license for the buyer, whose
    // stale, wrong and malformed deliveries above created nothing.
    const licenses = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: test.headers })
    assert.deepEqual(
      licenses.json().data.map((l: { policyId: string }) => l.policyId),
      [policy.json().id],
    )
    const customers = await test.app.inject({
      method: 'GET',
      url: '/api/v0/customers',
      headers: test.headers,
    })
    assert.deepEqual(
      customers.json().data.map((c: { email: string }) => c.email),
      ['darlene@example.com'],
    )

    // Its charge refunded (a `charge.refunded` event naming the session's PaymentIntent): revoked.
    const chargeRefunded = JSON.stringify({
      id: 'evt_3QfixtureChargeRefunded',
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: now,
      type: 'charge.refunded',
      data: {
        object: { id: 'ch_3Qfixture', object: 'charge', payment_intent: 'pi_3Qfixture', refunded: true },
      },
    })
    const refund = await post(signedAt(now, stripeSecret, chargeRefunded), chargeRefunded)
    assert.equal(refund.statusCode, 200, refund.body)
    const revoked = await test.app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${licenses.json().data[0].id}`,
      headers: test.headers,
    })
    assert.equal(revoked.json().status, 'revoked')
  })
})

// A `transaction.completed` notification shaped as Paddle Billing documents it
// (developer.paddle.com/webhooks/transactions/transaction-completed, trimmed).
const transactionCompleted = providerFixture('paddle-transaction-completed.json')
const paddleSecret = 'pdl_ntfset_fixture_secret_key'

function signedByPaddle(ts: number, body = transactionCompleted, key = paddleSecret): string {
  return paddleSignature(ts, body, key)
}

describeEachDatabase('receiving Paddle webhooks', (database) => {
  it('verifies ts:body at the server clock within 5 minutes and records each event id once', async (t) => {
    const test = await buildTestApp(t, database)
    const id = await integration(test, 'paddle', paddleSecret)
    const post = webhookPoster(test, id, 'paddle-signature', transactionCompleted)
    const now = Math.floor(test.clock.now().getTime() / 1000)

    const stale = await post(signedByPaddle(now - 301))
    assert.equal(stale.statusCode, 400, stale.body)
    assert.equal(stale.json().code, 'provider_signature_invalid')
    assert.equal((await post(signedByPaddle(now, transactionCompleted, 'another'))).statusCode, 400)
    assert.equal((await post(undefined)).statusCode, 400)
    const malformed = await post(signedByPaddle(now, '{"event_id":'), '{"event_id":')
    assert.equal(malformed.json().code, 'bad_request')

    const rotating = `${signedByPaddle(now, transactionCompleted, 'old-secret')};${signedByPaddle(now).split(';')[1]}`
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(rotating)))
    assert.deepEqual(answers.map((a) => [a.statusCode, a.json().duplicate]).sort(), [
      [200, false],
      ...Array(9).fill([200, true]),
    ])
    assert.deepEqual(
      (await receivedEvents(test, id)).map((e) => [e.dedupeKey, e.eventType]),
      [['evt_01hv8x2acma2gz3he7ey7y1dtz', 'transaction.completed']],
    )
  })
})
