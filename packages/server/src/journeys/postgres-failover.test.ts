import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { replicationSkip, startReplication } from '../testing/postgres-replication.js'
import { testMasterSecret } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_postgres-failover-test-key-00001'
const timeoutMs = 1000

/**
 * A PostgreSQL primary and its streaming standby, both in KEYTURN_DATABASE_URL with
 * target_session_attrs=read-write. The primary stops, the standby is promoted: Keyturn finds the
 * new primary by itself.
 */
describe('PostgreSQL fails over to a promoted standby', { skip: replicationSkip }, () => {
  it('connects to the writable host, answers 503 while there is none, and writes to the new primary', async (t) => {
    const replication = await startReplication(t)
    // The standby first: Keyturn must pass over it (it accepts no writes) to the primary.
    const url = `postgres://postgres@127.0.0.1:${replication.standbyPort},127.0.0.1:${replication.primaryPort}/postgres?target_session_attrs=read-write`
    const keyturn = await startServerProcess(t, {
      PORT: '0',
      LOG_LEVEL: 'warn',
      KEYTURN_SECRET: testMasterSecret,
      KEYTURN_ADMIN_KEY: adminKey,
      KEYTURN_DATABASE_URL: url,
      KEYTURN_DATABASE_TIMEOUT_MS: String(timeoutMs),
    })
    const call = async (method: string, path: string, body?: unknown, idempotencyKey?: string) => {
      const res = await fetch(`${keyturn.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: res.status, body: (await res.json()) as Record<string, unknown> }
    }
    const product = await call('POST', '/api/v0/products', { name: 'Failover' })
    assert.equal(product.status, 201, JSON.stringify(product.body))
    const productId = product.body.id as string
    const before = await call('POST', '/api/v0/licenses', { productId }, 'before')
    assert.equal(before.status, 201)

    await replication.stopPrimary()
    // No writable host: 503 database_unavailable (the standby refuses writes, the primary is gone).
    const during = await call('POST', '/api/v0/licenses', { productId }, 'during')
    assert.equal(during.status, 503, JSON.stringify(during.body))
    assert.equal(during.body.code, 'database_unavailable')

    await replication.promoteStandby()
    const deadline = performance.now() + 15_000
    let ready = 0
    while (ready !== 200 && performance.now() < deadline) {
      ready = (await fetch(`${keyturn.url}/readyz`)).status
      if (ready !== 200) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    assert.equal(ready, 200)
    // The write that failed, retried with its key, is made once on the new primary.
    const retried = await call('POST', '/api/v0/licenses', { productId }, 'during')
    assert.equal(retried.status, 201, JSON.stringify(retried.body))
    assert.equal((await call('POST', '/api/v0/licenses', { productId }, 'during')).body.id, retried.body.id)
    const list = await call('GET', `/api/v0/licenses?productId=${productId}&limit=1`)
    assert.equal(list.body.totalCount, 2, 'the license from before the failover and the retried one')
    assert.equal(keyturn.child.exitCode, null)
  })
})
