import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

describe('keyturn stats', () => {
  it("prints a product's days as a table with their total and the figures of now, and refuses a bad range", async (t) => {
    const server = await startCliTestServer(t)
    const created = await keyturn(['licenses', 'create', '--product', server.productId, '--json'], server.env)
    const license = JSON.parse(created.stdout)
    await keyturn(['activations', 'activate', license.id, '--fingerprint', 'laptop', '--json'], server.env)
    await server.services.stats.flush()

    const table = await keyturn(
      ['stats', '--product', server.productId, '--from', '2029-12-31', '--to', '2030-01-01'],
      server.env,
    )
    assert.equal(table.code, 0, table.stderr)
    const lines = table.stdout.trim().split('\n')
    assert.match(
      lines[0] ?? '',
      /^DAY\s+VALID\s+NOT VALID\s+ACTIVATED\s+DEACTIVATED\s+CREATED\s+RENEWED\s+REVOKED\s+SOLD\s+PAYMENTS FAILED\s+REFUNDED$/,
    )
    assert.match(lines[1] ?? '', /^2029-12-31(\s+0){10}$/)
    assert.match(lines[2] ?? '', /^2030-01-01\s+0\s+0\s+1\s+0\s+1(\s+0){5}$/)
    assert.match(lines[3] ?? '', /^total\s+0\s+0\s+1\s+0\s+1(\s+0){5}$/)
    assert.equal(lines[4], 'Now: 1 active machines, 0 licenses expiring within 30 days.')

    const bad = await keyturn(['stats', '--from', '2030-01-02', '--to', '2030-01-01'], server.env)
    assert.notEqual(bad.code, 0)
    assert.match(bad.stderr, /after to/)
  })
})
