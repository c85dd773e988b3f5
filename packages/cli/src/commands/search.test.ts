import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

describe('keyturn search', () => {
  it('prints what a key typed loosely or an email names, and says when nothing matches', async (t) => {
    const server = await startCliTestServer(t)
    const customer = await keyturn(
      ['customers', 'create', '--email', 'ada@example.com', '--json'],
      server.env,
    )
    const { id: customerId } = JSON.parse(customer.stdout)
    const created = await keyturn(['licenses', 'create', '--product', server.productId, '--json'], server.env)
    const license = JSON.parse(created.stdout)

    const [byKey, byEmail, nothing] = await Promise.all([
      keyturn(['search', license.key.replaceAll('-', '').toLowerCase(), '--json'], server.env),
      keyturn(['search', 'ADA@example.com'], server.env),
      keyturn(['search', 'no-such-thing'], server.env),
    ])

    assert.equal(byKey.code, 0, byKey.stderr)
    assert.deepEqual(
      JSON.parse(byKey.stdout).data.map((hit: { id: string }) => hit.id),
      [license.id],
    )
    assert.equal(byEmail.code, 0, byEmail.stderr)
    assert.match(byEmail.stdout, new RegExp(`Customer\\s+${customerId}\\s+ada@example.com\\s+-?\\s*email`))
    assert.equal(nothing.stdout.trim(), 'Nothing found.')
  })
})
