import assert from 'node:assert/strict'
import { it } from 'node:test'
import { decryptText } from '../../core/secrets.js'
import {
  buildTestApp,
  createProduct,
  productKeyHeaders,
  type TestApp,
  testSecretKeys,
} from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'
import { send } from '../../testing/requests.js'
import { KyselyIntegrationStore } from '../kysely-integration-store.js'

async function createPolicy(test: TestApp, productId = test.productId): Promise<string> {
  const res = await send(test, 'POST', '/policies', { productId, name: 'Yearly' })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

describeEachDatabase('integrations', (database) => {
  it('creates, shows, remaps and deletes an integration; the signing secret is stored encrypted and never shown', async (t) => {
    const test = await buildTestApp(t, database)
    const policyId = await createPolicy(test)
    const mapping = { providerItemId: 'price_123', productId: test.productId, policyId }
    const created = await send(test, 'POST', '/integrations', {
      provider: 'stripe',
      signingSecret: 'whsec_test_secret_value',
      mappings: [mapping],
    })
    assert.equal(created.statusCode, 201, created.body)
    const integration = created.json()
    assert.deepEqual(integration, {
      id: integration.id,
      object: 'Integration',
      provider: 'stripe',
      description: null,
      mappings: [mapping],
      onRefund: 'revoke',
      paymentGraceDays: 7,
      webhookPath: `/api/v0/integrations/${integration.id}/webhook`,
      createdAt: test.clock.now().toISOString(),
      updatedAt: test.clock.now().toISOString(),
    })
    assert.ok(!created.body.includes('whsec_test_secret_value'))

    const stored = await new KyselyIntegrationStore(test.connection.db).find(integration.id)
    assert.ok(stored !== undefined)
    assert.ok(!stored.signingSecretEncrypted.includes('whsec_test'))
    assert.equal(
      decryptText(testSecretKeys.integrationSecretEncryption, stored.signingSecretEncrypted),
      'whsec_test_secret_value',
    )

    const otherPolicy = await createPolicy(test)
    const changed = await send(test, 'PATCH', `/integrations/${integration.id}`, {
      mappings: [{ ...mapping, policyId: otherPolicy }],
      onRefund: 'none',
      paymentGraceDays: 0,
    })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json().mappings[0].policyId, otherPolicy)
    assert.equal(changed.json().onRefund, 'none')
    assert.equal(changed.json().paymentGraceDays, 0)

    const list = await send(test, 'GET', '/integrations')
    assert.deepEqual(
      list.json().data.map((i: { id: string }) => i.id),
      [integration.id],
    )
    const events = await send(test, 'GET', '/events?filter=type:eq:integration.updated')
    assert.equal(events.json().data.length, 1)
    assert.ok(!events.body.includes('whsec_test'))

    assert.equal((await send(test, 'DELETE', `/integrations/${integration.id}`)).statusCode, 204)
    assertProblem(await send(test, 'GET', `/integrations/${integration.id}`), 404, 'integration_not_found')
  })

  it('refuses a mapping to a policy of another product, an item mapped twice, and product keys', async (t) => {
    const test = await buildTestApp(t, database)
    const policyId = await createPolicy(test)
    const otherProduct = await createProduct(test.app, test.headers)
    const wrongProduct = await send(test, 'POST', '/integrations', {
      provider: 'paddle',
      signingSecret: 'pdl_ntfset_secret',
      mappings: [{ providerItemId: 'pri_1', productId: otherProduct, policyId }],
    })
    assert.equal(
      assertProblem(wrongProduct, 404, 'policy_not_found').errors?.[0]?.pointer,
      '#/mappings/0/policyId',
    )
    const twice = await send(test, 'POST', '/integrations', {
      provider: 'lemonsqueezy',
      signingSecret: 'ls_secret_value',
      mappings: [
        { providerItemId: '42', productId: test.productId, policyId },
        { providerItemId: '42', productId: test.productId, policyId },
      ],
    })
    assertProblem(twice, 400, 'validation_failed')
    const unknownProvider = await send(test, 'POST', '/integrations', {
      provider: 'paypal',
      signingSecret: 'x'.repeat(10),
    })
    assert.equal(unknownProvider.statusCode, 400, unknownProvider.body)
    const byProductKey = await test.app.inject({
      method: 'GET',
      url: '/api/v0/integrations',
      headers: await productKeyHeaders(test.app, test.headers, test.productId),
    })
    assertProblem(byProductKey, 403, 'forbidden')
  })
})
