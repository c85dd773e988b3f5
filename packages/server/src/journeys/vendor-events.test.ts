import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { call } from '../testing/vendors.js'

describeEachDatabase('events of customers, entitlements, policies and renewals', (database) => {
  it('records each change with the resource as the API returned it, and nothing for a refused one', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    // Events list in time order: each change a second after the one before.
    const step: typeof call = async (...args) => {
      clock.advance(1000)
      return call(...args)
    }
    const customer = await step(app, headers, 'POST', '/customers', 201, { email: 'ada@example.com' })
    const renamed = await step(app, headers, 'PATCH', `/customers/${customer.id}`, 200, { name: 'Ada' })
    const entitlement = await step(app, headers, 'POST', '/entitlements', 201, {
      productId,
      code: 'pdf',
      name: 'PDF',
    })
    const policy = await step(app, headers, 'POST', '/policies', 201, {
      productId,
      name: 'Monthly',
      duration: 30 * 86_400,
      entitlements: ['pdf'],
    })
    const updatedPolicy = await step(app, headers, 'PATCH', `/policies/${policy.id}`, 200, {
      name: 'Monthly Pro',
    })
    const license = await step(app, headers, 'POST', '/licenses', 201, { productId, policyId: policy.id })
    const renewed = await step(app, headers, 'POST', `/licenses/${license.id}/renew`, 200)
    await step(app, headers, 'POST', '/customers', 409, { email: 'ADA@example.com' })
    await step(app, headers, 'DELETE', `/policies/${policy.id}`, 409)
    await step(app, headers, 'DELETE', `/entitlements/${entitlement.id}`, 204)
    await step(app, headers, 'DELETE', `/customers/${customer.id}`, 204)

    const page = await call(app, headers, 'GET', '/events?sort=occurredAt:asc&limit=100', 200)
    const mine = page.data
      .filter((event: { type: string }) => !event.type.startsWith('product.'))
      .map((event: { type: string; productId: string | null; data: unknown }) => [
        event.type,
        event.productId,
        event.data,
      ])
    assert.deepEqual(mine, [
      ['customer.created', null, customer],
      ['customer.updated', null, renamed],
      ['entitlement.created', productId, entitlement],
      ['policy.created', productId, policy],
      ['policy.updated', productId, updatedPolicy],
      ['license.created', productId, license],
      ['license.renewed', productId, renewed],
      ['entitlement.deleted', productId, entitlement],
      ['customer.deleted', null, renamed],
    ])
  })
})
