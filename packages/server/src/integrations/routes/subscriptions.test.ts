import assert from 'node:assert/strict'
import { it } from 'node:test'
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

// Payloads shaped as each provider documents them: fixtures/README.md names the sources.
// biome-ignore lint/suspicious/noExplicitAny: provider payloads are edited field by field, as JSON
type Payload = Record<string, any>

function fixture(name: string): Payload {
  return JSON.parse(providerFixture(name))
}

const day = 86_400_000

/** Two monthly policies (Basic: 1 machine, Pro: 5 per seat bought) and an integration mapping `basic` / `pro` items to them. */
async function setUp(
  test: TestApp,
  provider: string,
  signingSecret: string,
  items: { readonly basic: string; readonly pro: string },
): Promise<{ readonly id: string; readonly basic: string; readonly pro: string; readonly url: string }> {
  const policy = async (name: string, maxActivations: number, seatsPerQuantity: boolean) => {
    const res = await test.app.inject({
      method: 'POST',
      url: '/api/v0/policies',
      headers: test.headers,
      payload: { productId: test.productId, name, duration: 30 * 86_400, maxActivations, seatsPerQuantity },
    })
    assert.equal(res.statusCode, 201, res.body)
    return res.json().id as string
  }
  const basic = await policy('Basic', 1, false)
  const pro = await policy('Pro', 5, true)
  const res = await test.app.inject({
    method: 'POST',
    url: '/api/v0/integrations',
    headers: test.headers,
    payload: {
      provider,
      signingSecret,
      paymentGraceDays: 7,
      mappings: [
        { providerItemId: items.basic, productId: test.productId, policyId: basic },
        { providerItemId: items.pro, productId: test.productId, policyId: pro },
      ],
    },
  })
  assert.equal(res.statusCode, 201, res.body)
  const base = await test.app.listen({ port: 0, host: '127.0.0.1' })
  return { id: res.json().id, basic, pro, url: `${base}/api/v0/integrations/${res.json().id}/webhook` }
}

/** The one license the integration sold, as the API shows it. */
async function theLicense(test: TestApp): Promise<Payload> {
  const res = await test.app.inject({ method: 'GET', url: '/api/v0/licenses', headers: test.headers })
  assert.equal(res.json().data.length, 1, res.body)
  return res.json().data[0]
}

async function validate(test: TestApp, key: string): Promise<[boolean, string | null]> {
  const res = await test.app.inject({
    method: 'POST',
    url: '/api/v0/licenses/validate',
    headers: test.headers,
    payload: { key, productId: test.productId },
  })
  assert.equal(res.statusCode, 200, res.body)
  return [res.json().isValid, res.json().reason]
}

async function receivedEvents(test: TestApp, id: string): Promise<[string, string][]> {
  const res = await test.app.inject({
    method: 'GET',
    url: `/api/v0/integrations/${id}/events`,
    headers: test.headers,
  })
  return res
    .json()
    .data.map((e: { eventType: string; status: string }) => [e.eventType, e.status])
    .sort() // received at one instant, their order is not the arrival's
}

async function licenseEventTypes(test: TestApp, licenseId: string): Promise<string[]> {
  const rows = await test.connection.db
    .selectFrom('events')
    .select('type')
    .where('license_id', '=', licenseId as `lic_${string}`)
    .orderBy('id')
    .execute()
  return rows.map((row) => row.type)
}

describeEachDatabase('Stripe subscriptions', (database) => {
  it('buy (key mailed) → renew → payment failed → grace → payment_overdue → restored → plan change → cancel → expires at period end', async (t) => {
    const { smtp, test } = await withMail(t, database)
    const secret = 'whsec_stripe_subscription_secret'
    const { id, pro, url } = await setUp(test, 'stripe', secret, { basic: 'price_basic', pro: 'price_pro' })
    let n = 0
    const deliver = async (event: Payload) => {
      n += 1
      const body = JSON.stringify({ ...event, id: `evt_${event.type}_${n}` })
      const header = stripeSignature(Math.floor(test.clock.now().getTime() / 1000), body, secret)
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
        body,
      })
      assert.equal(res.status, 200, await res.text())
    }
    const invoice = (type: string, reason: string, periodEnd: string) => {
      const event = fixture('stripe-invoice-paid.json')
      event.type = type
      event.data.object.billing_reason = reason
      event.data.object.lines.data[0].period.end = Date.parse(periodEnd) / 1000
      return event
    }

    await deliver(invoice('invoice.paid', 'subscription_create', '2030-02-01T00:00:00Z'))
    const bought = await theLicense(test)
    assert.equal(bought.expirationDate, '2030-02-01T00:00:00.000Z') // the period paid for
    const [keyMail] = await mailed(test, smtp)
    assert.ok(keyMail?.body.includes(bought.key), 'the buyer is mailed the key')
    assert.equal(bought.maxActivations, 1)
    await deliver(invoice('invoice.paid', 'subscription_cycle', '2030-03-01T00:00:00Z'))
    assert.equal((await theLicense(test)).expirationDate, '2030-03-01T00:00:00.000Z')

    // The next period's payment fails: the license keeps working for the 7 days of grace.
    test.clock.set('2030-03-01T00:00:00.000Z')
    await deliver(invoice('invoice.payment_failed', 'subscription_cycle', '2030-04-01T00:00:00Z'))
    assert.deepEqual(await validate(test, bought.key), [true, null])
    test.clock.advance(7 * day)
    assert.deepEqual(await validate(test, bought.key), [false, 'payment_overdue'])
    await deliver(invoice('invoice.paid', 'subscription_cycle', '2030-04-01T00:00:00Z'))
    assert.deepEqual(await validate(test, bought.key), [true, null])

    // Upgraded to 3 seats of Pro (5 machines a seat), then cancelled at the period's end: it runs
    // to 2030-04-01, then expires.
    const updated = fixture('stripe-customer-subscription-updated.json')
    updated.data.object.items.data[0].current_period_end = Date.parse('2030-04-01T00:00:00Z') / 1000
    updated.data.object.items.data[0].quantity = 3
    await deliver(updated)
    const upgraded = await theLicense(test)
    assert.deepEqual([upgraded.policyId, upgraded.maxActivations], [pro, 15])
    updated.data.object.cancel_at_period_end = true
    await deliver(updated)
    updated.type = 'customer.subscription.deleted'
    await deliver(updated)
    assert.equal((await theLicense(test)).expirationDate, '2030-04-01T00:00:00.000Z')
    assert.deepEqual(await validate(test, bought.key), [true, null])
    test.clock.set('2030-04-01T00:00:00.000Z')
    assert.deepEqual(await validate(test, bought.key), [false, 'expired'])

    assert.deepEqual(await licenseEventTypes(test, bought.id), [
      'license.created',
      'license.renewed',
      'license.payment_overdue',
      'license.payment_restored',
      'license.policy_changed',
    ])
    // Each names the integration as its actor.
    const actors = await test.connection.db
      .selectFrom('events')
      .select(['actor_type', 'actor_id'])
      .distinct()
      .where('license_id', '=', bought.id)
      .execute()
    assert.deepEqual(actors, [{ actor_type: 'integration', actor_id: id }])
    assert.ok((await receivedEvents(test, id)).every(([, status]) => status === 'processed'))

    // A refund of the subscription's payment (named by its PaymentIntent, which the invoice payment
    // linked) revokes the license.
    const invoicePayment = fixture('stripe-invoice-paid.json')
    invoicePayment.type = 'invoice_payment.paid'
    invoicePayment.data.object = {
      id: 'inpay_1Qfixture',
      object: 'invoice_payment',
      invoice: 'in_1QfixtureInvoice',
      is_default: true,
      status: 'paid',
      payment: { type: 'payment_intent', payment_intent: 'pi_1Qsubscription' },
    }
    await deliver(invoicePayment)
    const refunded = fixture('stripe-invoice-paid.json')
    refunded.type = 'charge.refunded'
    refunded.data.object = {
      id: 'ch_1Qsubscription',
      object: 'charge',
      payment_intent: 'pi_1Qsubscription',
      refunded: true,
    }
    await deliver(refunded)
    assert.equal((await theLicense(test)).status, 'revoked')

    // A subscription of an unmapped price was never sold here: its updates are not retried.
    const foreign = fixture('stripe-customer-subscription-updated.json')
    foreign.data.object.id = 'sub_1Qforeign'
    foreign.data.object.items.data[0].price.id = 'price_unmapped'
    await deliver(foreign)
    assert.deepEqual(
      (await receivedEvents(test, id)).filter(([, status]) => status !== 'processed'),
      [['customer.subscription.updated', 'ignored']],
    )
  })
})

describeEachDatabase('Lemon Squeezy subscriptions', (database) => {
  it('a payment before its subscription waits and is retried by the job; renew, grace, plan change, cancel, expire', async (t) => {
    const test = await buildTestApp(t, database)
    const secret = 'ls-subscription-secret'
    const { id, pro, url } = await setUp(test, 'lemonsqueezy', secret, { basic: '1', pro: '2' })
    let n = 0
    const deliver = async (event: Payload) => {
      n += 1
      event.data.attributes.updated_at = `2030-01-01T00:00:${String(n).padStart(2, '0')}.000000Z`
      const body = JSON.stringify(event)
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-signature': lemonSqueezySignature(body, secret),
        },
        body,
      })
      assert.equal(res.status, 200, await res.text())
    }
    const payment = (eventName: string) => {
      const event = fixture('lemonsqueezy-subscription-payment-success.json')
      event.meta.event_name = eventName
      return event
    }
    const subscription = (eventName: string, fields: Record<string, unknown>) => {
      const event = fixture('lemonsqueezy-subscription-created.json')
      event.meta.event_name = eventName
      Object.assign(event.data.attributes, fields)
      return event
    }

    // Out of order: the first payment arrives before the subscription it pays for.
    await deliver(payment('subscription_payment_success'))
    assert.deepEqual(await receivedEvents(test, id), [['subscription_payment_success', 'pending']])
    const waiting = await test.app.inject({
      method: 'GET',
      url: `/api/v0/integrations/${id}/events`,
      headers: test.headers,
    })
    assert.deepEqual(
      [waiting.json().data[0].attempts, waiting.json().data[0].nextAttemptAt],
      [1, '2030-01-01T00:01:00.000Z'],
    )
    // Its order arrives before it too: a license on the policy's 30 days, then the subscription's
    // period (a fortnight here) decides its expiry; one license.
    await deliver(fixture('lemonsqueezy-order-created.json'))
    assert.equal((await theLicense(test)).expirationDate, '2030-01-31T00:00:00.000Z')
    await deliver(subscription('subscription_created', { renews_at: '2030-01-15T00:00:00.000000Z' }))
    const bought = await theLicense(test)
    assert.equal(bought.expirationDate, '2030-01-15T00:00:00.000Z')
    assert.equal((await test.services.integrationRetries.tick()).tried, 0) // not due yet
    test.clock.advance(60_000)
    assert.deepEqual(await test.services.integrationRetries.tick(), {
      tried: 1,
      settled: 1,
      isBatchFull: false,
    })
    assert.deepEqual(await receivedEvents(test, id), [
      ['order_created', 'processed'],
      ['subscription_created', 'processed'],
      ['subscription_payment_success', 'processed'],
    ])

    // Renewed (the new period arrives with subscription_updated), a failed payment, grace, recovery.
    await deliver(subscription('subscription_updated', { renews_at: '2030-03-01T00:00:00.000000Z' }))
    assert.equal((await theLicense(test)).expirationDate, '2030-03-01T00:00:00.000Z')
    test.clock.set('2030-03-01T00:00:00.000Z')
    await deliver(payment('subscription_payment_failed'))
    assert.deepEqual(await validate(test, bought.key), [true, null])
    test.clock.advance(7 * day)
    assert.deepEqual(await validate(test, bought.key), [false, 'payment_overdue'])
    await deliver(payment('subscription_payment_success'))
    await deliver(
      subscription('subscription_updated', { renews_at: '2030-04-01T00:00:00.000000Z', variant_id: 2 }),
    )
    const upgraded = await theLicense(test)
    assert.deepEqual(
      [upgraded.policyId, upgraded.maxActivations, upgraded.expirationDate],
      [pro, 5, '2030-04-01T00:00:00.000Z'],
    )
    assert.deepEqual(await validate(test, bought.key), [true, null])

    // Cancelled: it runs to ends_at; expired then.
    await deliver(
      subscription('subscription_updated', {
        variant_id: 2,
        status: 'cancelled',
        cancelled: true,
        ends_at: '2030-04-01T00:00:00.000000Z',
      }),
    )
    await deliver(
      subscription('subscription_expired', {
        variant_id: 2,
        status: 'expired',
        ends_at: '2030-04-01T00:00:00.000000Z',
      }),
    )
    assert.equal((await theLicense(test)).expirationDate, '2030-04-01T00:00:00.000Z')
    assert.deepEqual(await validate(test, bought.key), [true, null])
    test.clock.set('2030-04-01T00:00:00.000Z')
    assert.deepEqual(await validate(test, bought.key), [false, 'expired'])
  })
})

describeEachDatabase('Paddle Billing', (database) => {
  it('checks Paddle-Signature at the server clock; a transaction waits for its customer (key mailed); renew, past due, scheduled cancel, refund', async (t) => {
    const { smtp, test } = await withMail(t, database)
    const secret = 'pdl_ntfset_subscription_secret'
    const { id, pro, url } = await setUp(test, 'paddle', secret, {
      basic: 'pri_01gsz8x8sawmvhz1pv30nge1ke',
      pro: 'pri_01gsz91wy9k1yn7kx82aafwvea',
    })
    let n = 0
    const post = (body: string, ts: number, key = secret) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'paddle-signature': paddleSignature(ts, body, key),
        },
        body,
      })
    const deliver = async (event: Payload) => {
      n += 1
      const body = JSON.stringify({ ...event, event_id: `evt_${String(n).padStart(26, '0')}` })
      const res = await post(body, Math.floor(test.clock.now().getTime() / 1000))
      assert.equal(res.status, 200, await res.text())
    }
    const now = () => Math.floor(test.clock.now().getTime() / 1000)
    const transaction = fixture('paddle-transaction-completed.json')

    // A bad signature and a stale timestamp are refused and record nothing.
    const body = JSON.stringify(transaction)
    const bad = await post(body, now(), 'another-secret')
    assert.equal(bad.status, 400)
    assert.equal(((await bad.json()) as { code: string }).code, 'provider_signature_invalid')
    const stale = await post(body, now() - 301)
    assert.equal(stale.status, 400)
    assert.match(((await stale.json()) as { detail: string }).detail, /more than 5 minutes/)
    assert.deepEqual(await receivedEvents(test, id), [])

    // The transaction names only its customer: it waits for customer.created, then the job makes the license.
    await deliver(transaction)
    await deliver(fixture('paddle-customer-created.json'))
    assert.deepEqual(await receivedEvents(test, id), [
      ['customer.created', 'processed'],
      ['transaction.completed', 'pending'],
    ])
    test.clock.advance(60_000)
    assert.equal((await test.services.integrationRetries.tick()).settled, 1)
    const bought = await theLicense(test)
    assert.equal(bought.expirationDate, '2031-01-01T00:00:00.000Z') // billing_period.ends_at
    const [keyMail] = await mailed(test, smtp)
    assert.ok(keyMail?.body.includes(bought.key), 'the buyer is mailed the key')

    // Past due: grace, then payment_overdue; the renewal transaction restores and renews it.
    test.clock.set('2031-01-01T00:00:00.000Z')
    const subscription = fixture('paddle-subscription-updated.json')
    subscription.event_type = 'subscription.past_due'
    subscription.data.status = 'past_due'
    subscription.data.current_billing_period = {
      starts_at: '2031-01-01T00:00:00.000000Z',
      ends_at: '2032-01-01T00:00:00.000000Z',
    }
    await deliver(subscription)
    test.clock.advance(6 * day)
    assert.deepEqual(await validate(test, bought.key), [true, null])
    test.clock.advance(day)
    assert.deepEqual(await validate(test, bought.key), [false, 'payment_overdue'])
    const renewal = fixture('paddle-transaction-completed.json')
    renewal.data.id = 'txn_01hv8y0000000000000000renew'
    renewal.data.billing_period = {
      starts_at: '2031-01-01T00:00:00.000000Z',
      ends_at: '2032-01-01T00:00:00.000000Z',
    }
    await deliver(renewal)
    assert.deepEqual(await validate(test, bought.key), [true, null])
    assert.equal((await theLicense(test)).expirationDate, '2032-01-01T00:00:00.000Z')

    // Upgraded with a cancellation scheduled for the period's end: moved to Pro, runs to then.
    subscription.event_type = 'subscription.updated'
    subscription.data.status = 'active'
    subscription.data.items[0].price.id = 'pri_01gsz91wy9k1yn7kx82aafwvea'
    subscription.data.scheduled_change = {
      action: 'cancel',
      effective_at: '2032-01-01T00:00:00.000000Z',
      resume_at: null,
    }
    await deliver(subscription)
    const upgraded = await theLicense(test)
    assert.deepEqual(
      [upgraded.policyId, upgraded.maxActivations, upgraded.expirationDate],
      [pro, 5, '2032-01-01T00:00:00.000Z'],
    )

    // The renewal refunded (approved): revoked.
    await deliver({
      event_type: 'adjustment.updated',
      occurred_at: '2031-01-09T00:00:00.000000Z',
      notification_id: 'ntf_01hv8y1111111111111111111a',
      data: {
        id: 'adj_01hv8y2222222222222222222a',
        action: 'refund',
        type: 'full',
        status: 'approved',
        transaction_id: 'txn_01hv8y0000000000000000renew',
        subscription_id: 'sub_01hv8x29kz0t586xy6zn1a62ny',
        customer_id: 'ctm_01hv8wt8nffez4p2t6typn4a5j',
        reason: 'Requested by the customer',
      },
    })
    assert.equal((await theLicense(test)).status, 'revoked')

    // An event whose subscription never arrives is retried, then given up three days after receipt.
    subscription.data.id = 'sub_01hv8z9999999999999999999z'
    await deliver(subscription)
    test.clock.advance(3 * day - 1)
    assert.equal((await test.services.integrationRetries.tick()).settled, 0)
    test.clock.advance(6 * 3_600_000)
    assert.deepEqual(await test.services.integrationRetries.tick(), {
      tried: 1,
      settled: 1,
      isBatchFull: false,
    })
    const events = await test.app.inject({
      method: 'GET',
      url: `/api/v0/integrations/${id}/events`,
      headers: test.headers,
    })
    const givenUp = events.json().data.find((e: { status: string }) => e.status === 'failed')
    assert.match(
      givenUp.outcome,
      /^Given up after \d+ attempts: No license is linked to subscription sub_01hv8z9/,
    )
    assert.equal(givenUp.nextAttemptAt, null)
  })
})
