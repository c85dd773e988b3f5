import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { it } from 'node:test'
import type { Stats, StatsCounts } from '@keyturn/protocol'
import { sql } from 'kysely'
import Stripe from 'stripe'
import { buildApp } from '../app.js'
import { startBackgroundWork } from '../core/background-loop.js'
import type { App } from '../http/app-types.js'
import {
  buildTestApp,
  createProduct,
  testCompiledSchemas,
  testSecretKeys,
} from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { FixedClock } from '../testing/fixed-clock.js'
import { type AuthHeaders, expectInvalidField, expectProblem } from '../testing/licenses.js'
import { call, roleHeaders } from '../testing/vendors.js'

const day = 86_400_000
const emptyCounts: StatsCounts = {
  validationsValid: 0,
  validationsInvalid: 0,
  activations: 0,
  deactivations: 0,
  licensesCreated: 0,
  licensesRenewed: 0,
  licensesRevoked: 0,
  licensesSold: 0,
  providerRenewals: 0,
  paymentFailures: 0,
  refundRevocations: 0,
}

/** What the events and licenses tables say happened, per `product|day`. */
async function countedFromTables(app: TestAppLike): Promise<Map<string, StatsCounts>> {
  const counted = new Map<string, StatsCounts>()
  const add = (productId: string, at: Date | string, what: keyof StatsCounts) => {
    const key = `${productId}|${new Date(at).toISOString().slice(0, 10)}`
    const counts = counted.get(key) ?? { ...emptyCounts }
    counts[what] += 1
    counted.set(key, counts)
  }
  const { rows: licenses } = await sql<{ product_id: string; created_at: Date | string }>`
    select product_id, created_at from licenses`.execute(app.db)
  for (const row of licenses) {
    add(row.product_id, row.created_at, 'licensesCreated')
  }
  const byType: Record<string, keyof StatsCounts> = {
    'license.validated': 'validationsValid',
    'license.validation_failed': 'validationsInvalid',
    'activation.created': 'activations',
    'activation.deleted': 'deactivations',
    'license.renewed': 'licensesRenewed',
    'license.revoked': 'licensesRevoked',
  }
  // What a payment-provider integration did, told by the event's actor.
  const byProvider: Record<string, keyof StatsCounts> = {
    'license.created': 'licensesSold',
    'license.renewed': 'providerRenewals',
    'license.payment_overdue': 'paymentFailures',
    'license.revoked': 'refundRevocations',
  }
  const { rows: events } = await sql<{
    type: string
    product_id: string
    occurred_at: Date | string
    actor_type: string
  }>`select type, product_id, occurred_at, actor_type from events`.execute(app.db)
  for (const row of events) {
    const what = byType[row.type]
    if (what !== undefined) {
      add(row.product_id, row.occurred_at, what)
    }
    const sold = row.actor_type === 'integration' ? byProvider[row.type] : undefined
    if (sold !== undefined) {
      add(row.product_id, row.occurred_at, sold)
    }
  }
  return counted
}

interface TestAppLike {
  readonly db: Parameters<typeof buildApp>[0]['db']
}

// biome-ignore lint/suspicious/noExplicitAny: a provider payload, edited field by field as JSON
type Payload = Record<string, any>

/**
 * A Stripe subscription sold through a new integration on `product`, then renewed, its next payment
 * failed, and its payment refunded (the license revoked); one event is delivered twice.
 */
async function sellThroughStripe(on: App, headers: AuthHeaders, product: string, now: Date) {
  const secret = 'whsec_stats_secret'
  const policy = await call(on, headers, 'POST', '/policies', 201, {
    productId: product,
    name: 'Monthly',
    duration: 30 * 86_400,
  })
  const integration = await call(on, headers, 'POST', '/integrations', 201, {
    provider: 'stripe',
    signingSecret: secret,
    mappings: [{ providerItemId: 'price_basic', productId: product, policyId: policy.id }],
  })
  const fixture = (): Payload =>
    JSON.parse(
      readFileSync(
        new URL('../../src/integrations/fixtures/stripe-invoice-paid.json', import.meta.url),
        'utf8',
      ),
    )
  let n = 0
  const deliver = async (event: Payload, again = false) => {
    n += again ? 0 : 1
    const body = JSON.stringify({ ...event, id: `evt_stats_${n}` })
    const res = await on.inject({
      method: 'POST',
      url: `/api/v0/integrations/${integration.id}/webhook`,
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({
          payload: body,
          secret,
          timestamp: Math.floor(now.getTime() / 1000),
        }),
      },
      payload: body,
    })
    assert.equal(res.statusCode, 200, res.body)
  }
  const invoice = (type: string, reason: string, periodEnd: number) => {
    const event = fixture()
    event.type = type
    event.data.object.billing_reason = reason
    event.data.object.lines.data[0].period.end = Math.floor(now.getTime() / 1000) + periodEnd * 86_400
    return event
  }
  await deliver(invoice('invoice.paid', 'subscription_create', 30))
  await deliver(invoice('invoice.paid', 'subscription_create', 30), true) // a redelivery: nothing more
  await deliver(invoice('invoice.paid', 'subscription_cycle', 60))
  await deliver(invoice('invoice.payment_failed', 'subscription_cycle', 90))
  const paid = fixture()
  paid.type = 'invoice_payment.paid'
  paid.data.object = {
    id: 'inpay_stats',
    object: 'invoice_payment',
    invoice: 'in_1QfixtureInvoice',
    is_default: true,
    status: 'paid',
    payment: { type: 'payment_intent', payment_intent: 'pi_stats' },
  }
  await deliver(paid)
  const refunded = fixture()
  refunded.type = 'charge.refunded'
  refunded.data.object = { id: 'ch_stats', object: 'charge', payment_intent: 'pi_stats', refunded: true }
  await deliver(refunded)
}

describeEachDatabase('/api/v0/stats', (database) => {
  it('counts a mixed workload of two processes exactly as the tables and events count it, per product and day', async (t) => {
    const { app, services, clock, headers, productId, connection } = await buildTestApp(t, database, {
      recordValidations: true,
    })
    // A second serving process on the same database: its own counters, flushed on its own.
    const otherClock = new FixedClock(clock.now().toISOString())
    const other = buildApp({
      db: connection.db,
      clock: otherClock,
      secretKeys: testSecretKeys,
      logger: false,
      compiledSchemas: testCompiledSchemas,
      recordValidations: true,
    })
    // Its flush runs as `keyturn serve` runs it: in the background, and a last time when it closes.
    const otherFlush = startBackgroundWork(
      other.background.filter((job) => job.name === 'statistics flush'),
      { log: { info: () => {}, error: () => {} } },
    )
    t.after(async () => {
      await otherFlush.stop()
      await other.app.close()
      await other.app.close()
    })
    const otherProduct = await createProduct(app, headers, 'Other')

    const workload = async (on: App, product: string, round: number) => {
      const expiring = await call(on, headers, 'POST', '/licenses', 201, {
        productId: product,
        expirationDate: new Date(clock.now().getTime() + 10 * day).toISOString(),
      })
      const plain = await call(on, headers, 'POST', '/licenses', 201, {
        productId: product,
        maxActivations: 3,
      })
      const doomed = await call(on, headers, 'POST', '/licenses', 201, { productId: product })
      const validate = (key: string, fingerprint?: string) =>
        call(on, headers, 'POST', '/licenses/validate', 200, {
          key,
          productId: product,
          ...(fingerprint === undefined ? {} : { fingerprint }),
        })
      for (const fingerprint of ['a', 'b']) {
        await call(on, headers, 'POST', '/licenses/activate', 201, {
          key: plain.key,
          productId: product,
          fingerprint: `${fingerprint}${round}`,
        })
      }
      await call(on, headers, 'POST', '/licenses/activate', 200, {
        key: plain.key,
        productId: product,
        fingerprint: `a${round}`,
      }) // a repeat: no new machine
      await validate(plain.key)
      await validate(plain.key, `a${round}`)
      await validate(plain.key, 'never-activated')
      await call(on, headers, 'POST', `/licenses/${expiring.id}/renew`, 200, { duration: 86_400 })
      await call(on, headers, 'POST', `/licenses/${doomed.id}/revoke`, 200)
      await call(on, headers, 'POST', `/licenses/${doomed.id}/revoke`, 200) // already revoked: no change
      await validate(doomed.key)
      await call(on, headers, 'POST', '/licenses/deactivate', 204, {
        key: plain.key,
        productId: product,
        fingerprint: `b${round}`,
      })
      await call(on, headers, 'POST', '/licenses/validate', 404, { key: 'NOPE-NOPE', productId: product })
    }

    await workload(app, productId, 1)
    await sellThroughStripe(app, headers, productId, clock.now())
    await workload(other.app, otherProduct, 2)
    await sellThroughStripe(other.app, headers, otherProduct, otherClock.now())
    await services.stats.flush() // a flush in the middle of a day: the next one adds to its row
    await workload(app, productId, 3)
    clock.advance(day)
    otherClock.advance(day)
    await workload(other.app, productId, 4)
    await workload(app, otherProduct, 5)
    await services.stats.flush()
    await otherFlush.stop()
    await other.app.close()

    const counted = await countedFromTables(connection)
    const from = '2030-01-01'
    const to = '2030-01-02'
    for (const product of [productId, otherProduct]) {
      const stats: Stats = await call(
        app,
        headers,
        'GET',
        `/stats?from=${from}&to=${to}&productId=${product}`,
        200,
      )
      assert.deepEqual(
        stats.days,
        [from, to].map((date) => ({ date, ...(counted.get(`${product}|${date}`) ?? emptyCounts) })),
      )
    }
    const all: Stats = await call(app, headers, 'GET', `/stats?from=${from}&to=${to}`, 200)
    assert.equal(all.productId, null)
    assert.deepEqual(all.totals, {
      validationsValid: 5 * 2,
      validationsInvalid: 5 * 2,
      activations: 5 * 2,
      deactivations: 5,
      licensesCreated: 5 * 3 + 2,
      licensesRenewed: 5 + 2,
      licensesRevoked: 5 + 2,
      licensesSold: 2,
      providerRenewals: 2,
      paymentFailures: 2,
      refundRevocations: 2,
    })
    // Each round left one machine and one license expiring in 10 days (renewed by one, so 11).
    assert.deepEqual(all.now, { at: clock.now().toISOString(), activeMachines: 5, licensesExpiringSoon: 5 })
  })

  it('answers a product key with its own product only, the last 30 days by default, and refuses bad ranges', async (t) => {
    const { app, services, clock, headers, productId } = await buildTestApp(t, database)
    const otherProduct = await createProduct(app, headers, 'Other')
    await call(app, headers, 'POST', '/licenses', 201, { productId })
    await call(app, headers, 'POST', '/licenses', 201, { productId: otherProduct })
    await call(app, headers, 'POST', '/licenses', 201, { productId: otherProduct })
    clock.advance(3 * day)
    await services.stats.flush()

    const productKey = await roleHeaders(app, headers, 'product', productId)
    const own: Stats = await call(app, productKey, 'GET', '/stats', 200)
    assert.equal(own.productId, productId)
    assert.equal(own.to, '2030-01-04')
    assert.equal(own.from, '2029-12-06')
    assert.equal(own.days.length, 30)
    assert.equal(own.totals.licensesCreated, 1)
    assert.deepEqual(own.days.at(-4), { date: '2030-01-01', ...emptyCounts, licensesCreated: 1 })
    expectProblem(
      await app.inject({
        method: 'GET',
        url: `/api/v0/stats?productId=${otherProduct}`,
        headers: productKey,
      }),
      404,
      'product_not_found',
    )
    const clientKey = await roleHeaders(app, headers, 'client', productId)
    expectProblem(
      await app.inject({ method: 'GET', url: '/api/v0/stats', headers: clientKey }),
      403,
      'forbidden',
    )
    const all: Stats = await call(app, headers, 'GET', '/stats', 200)
    assert.equal(all.totals.licensesCreated, 3)

    const bad = async (query: string, pointer: string) =>
      expectInvalidField(await app.inject({ method: 'GET', url: `/api/v0/stats?${query}`, headers }), pointer)
    await bad('from=2030-01-05&to=2030-01-04', '#/from')
    await bad('from=2029-01-01&to=2030-01-02', '#/from') // 367 days
    await bad('from=2030-02-30&to=2030-03-02', '#/from')
    await bad('to=20300101', '#/to')
    const year: Stats = await call(app, headers, 'GET', '/stats?from=2029-01-02&to=2030-01-02', 200)
    assert.equal(year.days.length, 366)
  })
})
