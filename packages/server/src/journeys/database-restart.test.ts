import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { startFaultJourney } from '../testing/fault-journey.js'

const timeoutMs = 1000
const url = process.env.TEST_POSTGRES_URL
const skip = url ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')

/**
 * PostgreSQL restarting under a running `keyturn serve`: the server ends every connection with
 * 57P01 ("terminating connection due to administrator command") and refuses new ones for a while.
 * The test plays the restart through a TCP proxy it controls, in front of the test PostgreSQL.
 */
describe('PostgreSQL restarts under a running keyturn serve', { skip }, () => {
  it('answers 503 database_unavailable during the outage, logs it once, and recovers by itself', async (t) => {
    const { keyturn, proxy, directUrl, call, logLines, readyAgain } = await startFaultJourney(t, url ?? '', {
      KEYTURN_DATABASE_TIMEOUT_MS: String(timeoutMs),
    })
    const direct = new URL(directUrl)

    const product = await call('POST', '/api/v0/products', { name: 'Restarted' })
    const productId = product.body.id as string
    const before = await call('POST', '/api/v0/licenses', { productId, maxActivations: 100 }, 'before')
    assert.equal(before.status, 201)
    const licenseId = before.body.id as string
    const key = before.body.key as string
    // Several pooled connections are open and idle when the restart comes.
    await Promise.all(
      Array.from({ length: 8 }, () => call('POST', '/api/v0/licenses/validate', { key, productId })),
    )
    assert.ok(proxy.upstreamPorts().length > 1, 'the server holds pooled connections')

    // The restart: new connections refused, the open ones ended by the server with 57P01.
    proxy.down()
    const admin = new pg.Client({ connectionString: direct.toString() })
    await admin.connect()
    const terminated = await admin.query<{ n: number }>(
      'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where client_port = any($1::int[])',
      [proxy.upstreamPorts()],
    )
    await admin.end()
    assert.ok((terminated.rows[0]?.n ?? 0) > 1)

    const duringOutage = [
      ...Array.from(
        { length: 10 },
        () => () => call('POST', '/api/v0/licenses/validate', { key, productId }),
      ),
      ...Array.from(
        { length: 10 },
        (_, n) => () => call('POST', '/api/v0/licenses', { productId }, `during-${n}`),
      ),
      ...Array.from(
        { length: 10 },
        (_, n) => () =>
          call('POST', '/api/v0/licenses/activate', { key, productId, fingerprint: `machine-${n}` }),
      ),
      ...Array.from({ length: 10 }, () => () => call('POST', `/api/v0/licenses/${licenseId}/tokens`, {})),
    ]
    const started = performance.now()
    const answers = await Promise.all(duringOutage.map((request) => request()))
    const elapsed = performance.now() - started
    for (const answer of answers) {
      assert.equal(answer.status, 503, JSON.stringify(answer.body))
      assert.equal(answer.body.code, 'database_unavailable')
      assert.equal(answer.contentType, 'application/problem+json; charset=utf-8')
      assert.equal(answer.retryAfter, '2')
    }
    // Bounded by the database timeout, not hanging (generous: the machine may be busy).
    assert.ok(elapsed < timeoutMs * 5, `answered in ${Math.round(elapsed)} ms`)
    assert.equal((await fetch(`${keyturn.url}/readyz`)).status, 503)
    assert.equal((await fetch(`${keyturn.url}/healthz`)).status, 200)
    assert.equal(keyturn.child.exitCode, null, 'the process is still running')

    // PostgreSQL is back: the pool reconnects by itself, no restart of Keyturn.
    proxy.up()
    await readyAgain()
    // The creates that failed, retried with their Idempotency-Keys, each make one license.
    for (let n = 0; n < 10; n++) {
      const retried = await call('POST', '/api/v0/licenses', { productId }, `during-${n}`)
      assert.equal(retried.status, 201)
      assert.equal(
        (await call('POST', '/api/v0/licenses', { productId }, `during-${n}`)).body.id,
        retried.body.id,
      )
    }
    const list = await call('GET', `/api/v0/licenses?productId=${productId}&limit=1`)
    assert.equal(list.body.totalCount, 11, 'the license acknowledged before and the 10 retried, each once')
    assert.equal((await call('GET', `/api/v0/licenses/${licenseId}`)).body.key, key)

    const lines = logLines()
    const lost = lines.filter((line) => line.includes('the database does not answer'))
    assert.equal(lost.length, 1, `the outage is logged once:\n${lines.join('\n')}`)
    assert.equal(lines.filter((line) => line.includes('the database answers again')).length, 1)
    assert.ok(
      !lines.some((line) => line.includes('"level":50') && !line.includes('the database does not answer')),
    )
  })
})
