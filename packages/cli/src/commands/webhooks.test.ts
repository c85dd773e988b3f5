import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { EventResource, Paginated, WebhookEndpointWithSecretResource } from '@keyturn/client'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

describe('keyturn webhooks and keyturn events', () => {
  it('creates, shows, tests, updates and deletes an endpoint; lists and shows its events', async (t) => {
    const server = await startCliTestServer(t)

    const created = await keyturn(
      [
        'webhooks',
        'create',
        '--endpoint-url',
        'https://billing.example.com/keyturn',
        '--events',
        'license.*',
        '--json',
      ],
      server.env,
    )
    assert.equal(created.code, 0, created.stderr)
    const endpoint: WebhookEndpointWithSecretResource = JSON.parse(created.stdout)
    assert.match(endpoint.secret, /^whsec_/)

    const listed = await keyturn(['webhooks', 'list'], server.env)
    assert.equal(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, new RegExp(endpoint.id))
    const tested = await keyturn(['webhooks', 'test', endpoint.id], server.env)
    assert.equal(tested.code, 0, tested.stderr)
    const updated = await keyturn(['webhooks', 'update', endpoint.id, '--disable'], server.env)
    assert.match(updated.stdout, /enabled +false/)
    const deliveries = await keyturn(['webhooks', 'deliveries', endpoint.id], server.env)
    assert.equal(deliveries.code, 0, deliveries.stderr)
    const bad = await keyturn(
      ['webhooks', 'create', '--endpoint-url', 'https://x.example', '--events', 'license'],
      server.env,
    )
    assert.equal(bad.code, 2, bad.stdout)

    const events = await keyturn(
      ['events', 'list', '--filter', 'type:eq:webhook_endpoint.created', '--json'],
      server.env,
    )
    assert.equal(events.code, 0, events.stderr)
    const page: Paginated<EventResource> = JSON.parse(events.stdout)
    assert.equal(page.data[0]?.data.id, endpoint.id)
    const shown = await keyturn(['events', 'get', page.data[0]?.id ?? ''], server.env)
    assert.match(shown.stdout, /webhook_endpoint\.created/)

    const deleted = await keyturn(['webhooks', 'delete', endpoint.id], server.env)
    assert.equal(deleted.stdout, `Deleted webhook endpoint ${endpoint.id}.\n`)
  })
})
