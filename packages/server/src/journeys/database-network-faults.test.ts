import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import pg from 'pg'
import { type Answer, type FaultJourney, startFaultJourney } from '../testing/fault-journey.js'

const url = process.env.TEST_POSTGRES_URL
const skip = url ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')

/** A product with one license, and warm pooled connections (several requests at once). */
async function seed(journey: FaultJourney) {
  const product = await journey.call('POST', '/api/v0/products', { name: 'Network faults' })
  const productId = product.body.id as string
  const license = await journey.call('POST', '/api/v0/licenses', { productId, maxActivations: 100 })
  assert.equal(license.status, 201)
  const key = license.body.key as string
  const licenseId = license.body.id as string
  await Promise.all(
    Array.from({ length: 6 }, () => journey.call('POST', '/api/v0/licenses/validate', { key, productId })),
  )
  return { productId, key, licenseId }
}

/** Validations, creates (each with its Idempotency-Key) and token requests, all at once. */
function mixedLoad(journey: FaultJourney, seeded: Awaited<ReturnType<typeof seed>>, tag: string) {
  const { productId, key, licenseId } = seeded
  return Promise.all([
    ...Array.from({ length: 4 }, () => journey.call('POST', '/api/v0/licenses/validate', { key, productId })),
    ...Array.from({ length: 4 }, (_, n) =>
      journey.call('POST', '/api/v0/licenses', { productId }, `${tag}-${n}`),
    ),
    ...Array.from({ length: 4 }, () => journey.call('POST', `/api/v0/licenses/${licenseId}/tokens`, {})),
  ])
}

function describeAnswers(answers: readonly Answer[]): string {
  return answers
    .map((answer) => `${answer.status} ${Math.round(answer.ms)} ms ${JSON.stringify(answer.body)}`)
    .join('\n')
}

/**
 * The network between Keyturn and PostgreSQL fails without closing anything (through a TCP proxy the
 * test controls): a silent peer, then a slow one.
 */
describe('PostgreSQL behind a silent or slow network', { skip }, () => {
  it('answers 503 database_unavailable within the database timeout while the peer is silent, and recovers', async (t) => {
    const timeoutMs = 500
    const journey = await startFaultJourney(t, url ?? '', { KEYTURN_DATABASE_TIMEOUT_MS: String(timeoutMs) })
    const seeded = await seed(journey)

    journey.proxy.blackhole()
    const answers = await mixedLoad(journey, seeded, 'silent')
    for (const answer of answers) {
      assert.equal(answer.status, 503, describeAnswers(answers))
      assert.equal(answer.body.code, 'database_unavailable', describeAnswers(answers))
      assert.equal(answer.retryAfter, '2')
      // At most a connection's wait (the timeout) and one statement's read timeout (timeout + 1 s),
      // with a second to spare for a busy machine; nothing hangs until TCP gives up (minutes).
      assert.ok(answer.ms < 2 * timeoutMs + 2000, describeAnswers(answers))
    }
    const ready = await fetch(`${journey.keyturn.url}/readyz`)
    assert.equal(ready.status, 503)
    assert.deepEqual(((await ready.json()) as { failing: unknown }).failing, ['database'])
    assert.equal(await journey.metric('keyturn_database_reachable'), 0)
    assert.equal((await fetch(`${journey.keyturn.url}/healthz`)).status, 200)

    // The route is back: the broken connections were dropped, new ones serve.
    journey.proxy.up()
    await journey.readyAgain()
    const after = await mixedLoad(journey, seeded, 'silent')
    assert.deepEqual(
      after.map((answer) => answer.status),
      [200, 200, 200, 200, 201, 201, 201, 201, 201, 201, 201, 201],
      describeAnswers(after),
    )
    assert.equal(await journey.metric('keyturn_database_reachable'), 1)
    assert.ok(((await journey.metric('keyturn_database_connection_errors_total')) ?? 0) > 0)
    assert.equal(journey.keyturn.child.exitCode, null, 'the process is still running')

    // The background loops (webhook delivery, seat sweep) failed silently meanwhile: one line for
    // the outage, one for its end, nothing else at error level.
    const lines = journey.logLines()
    assert.equal(
      lines.filter((line) => line.includes('the database does not answer')).length,
      1,
      lines.join('\n'),
    )
    assert.equal(lines.filter((line) => line.includes('the database answers again')).length, 1)
    assert.ok(
      !lines.some((line) => line.includes('"level":50') && !line.includes('the database does not answer')),
      lines.join('\n'),
    )
  })

  // One server for the slow network and then the lost connection: each journey starts a process on
  // a fresh schema, migrated through the proxy.
  it('answers every request, only slower, with 200 ms per round trip; then loses no request when the server ends one idle connection', async (t) => {
    const journey = await startFaultJourney(t, url ?? '')
    const seeded = await seed(journey)

    journey.proxy.latency(100) // each way
    const answers = await mixedLoad(journey, seeded, 'slow')
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 200, 200, 201, 201, 201, 201, 201, 201, 201, 201],
      describeAnswers(answers),
    )
    // Each answer needed at least one round trip to the database.
    for (const answer of answers) {
      assert.ok(answer.ms >= 200, describeAnswers(answers))
    }
    // The pool grew to its bound and queued the rest; nothing timed out or broke.
    assert.equal(
      await journey.metric('keyturn_database_connection_errors_total'),
      0,
      journey.logLines().join('\n'),
    )
    const [inUse = 0, idle = 0] = await journey.metrics(
      'keyturn_database_pool_connections{state="in_use"}',
      'keyturn_database_pool_connections{state="idle"}',
    )
    assert.ok(inUse + idle > 1 && inUse + idle <= 10, `${inUse} in use, ${idle} idle`)
    assert.ok(!journey.logLines().some((line) => line.includes('"level":50')), journey.logLines().join('\n'))

    journey.proxy.latency(0)
    // The server ends one pooled connection (an idle timeout, an administrator): the pool drops it.
    const admin = new pg.Client({ connectionString: journey.directUrl })
    await admin.connect()
    t.after(() => admin.end())
    const [port] = journey.proxy.upstreamPorts()
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where client_port = $1', [port])
    const deadline = performance.now() + 5000
    // Heard from the log, not /metrics (whose scrape would query the database first).
    while (!journey.logLines().some((line) => line.includes('the database does not answer'))) {
      assert.ok(performance.now() < deadline, 'the pool heard the connection end')
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    // The database answers: nobody is turned away while another connection serves.
    const served = await mixedLoad(journey, seeded, 'one-lost')
    assert.deepEqual(
      served.map((answer) => answer.status),
      [200, 200, 200, 200, 201, 201, 201, 201, 201, 201, 201, 201],
      describeAnswers(served),
    )
  })
})
