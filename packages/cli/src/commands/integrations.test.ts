import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { IntegrationResource } from '@keyturn/client'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

describe('keyturn integrations', () => {
  it('creates with the secret from the environment, lists, remaps, shows received events and deletes', async (t) => {
    const server = await startCliTestServer(t)
    const product = JSON.parse(
      (await keyturn(['products', 'create', '--name', 'Sold', '--json'], server.env)).stdout,
    )
    const policy = JSON.parse(
      (
        await keyturn(
          [
            'policies',
            'create',
            '--product',
            product.id,
            '--name',
            'Yearly',
            '--max-activations',
            '2',
            '--seats-per-quantity',
            'true',
            '--json',
          ],
          server.env,
        )
      ).stdout,
    )
    assert.deepEqual([policy.maxActivations, policy.seatsPerQuantity], [2, true])

    const noSecret = await keyturn(['integrations', 'create', '--provider', 'stripe'], server.env)
    assert.equal(noSecret.code, 2, noSecret.stdout)
    assert.match(noSecret.stderr, /KEYTURN_SIGNING_SECRET/)

    const created = await keyturn(
      [
        'integrations',
        'create',
        '--provider',
        'stripe',
        '--map',
        `price_123=${product.id}:${policy.id}`,
        '--json',
      ],
      { ...server.env, KEYTURN_SIGNING_SECRET: 'whsec_cli_secret_value' },
    )
    assert.equal(created.code, 0, created.stderr)
    const integration: IntegrationResource = JSON.parse(created.stdout)
    assert.deepEqual(integration.mappings, [
      { providerItemId: 'price_123', productId: product.id, policyId: policy.id },
    ])
    assert.ok(!created.stdout.includes('whsec_cli_secret_value'))

    const listed = await keyturn(['integrations', 'list'], server.env)
    assert.match(listed.stdout, new RegExp(`${integration.id} +stripe +1 +revoke +7`))
    const updated = await keyturn(['integrations', 'update', integration.id, '--grace-days', '3'], server.env)
    assert.match(updated.stdout, /grace days +3/)
    const events = await keyturn(['integrations', 'events', integration.id], server.env)
    assert.equal(events.code, 0, events.stderr)
    const deleted = await keyturn(['integrations', 'delete', integration.id], server.env)
    assert.equal(deleted.stdout, `Deleted integration ${integration.id}.\n`)
  })
})
