import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import type { ProductId } from '@keyturn/protocol'
import { Redis } from 'ioredis'
import type { App } from '../../http/app-types.js'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase, sqliteTestDatabase, type TestDatabase } from '../../testing/each-database.js'
import { createLicense, expectProblem } from '../../testing/licenses.js'
import { redisSkip, startRedis } from '../../testing/redis-server.js'
import { type CounterStore, memoryCounters, redisCounters } from '../counters.js'
import type { ProtectionOptions } from './rate-limits.js'

const unknownKey = 'AAAAA-AAAAA-AAAAA-AAAAA-AAAAA'

function protection(overrides: Partial<ProtectionOptions> = {}): ProtectionOptions {
  return {
    keyPerMinute: 1000,
    ipPerMinute: 1000,
    guessLimit: 0,
    guessBlockSeconds: 900,
    counters: memoryCounters(),
    ...overrides,
  }
}

async function clientKey(app: App, admin: { authorization: string }, productId: ProductId) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v0/api-keys',
    headers: admin,
    payload: { name: 'shipped', role: 'client', productId },
  })
  assert.equal(res.statusCode, 201, res.body)
  return { authorization: `Bearer ${res.json().secret}` }
}

/** A validation from `address` (the socket's remote address as Fastify sees it). */
function validate(app: App, headers: object, productId: ProductId, key: string, address = '203.0.113.7') {
  return app.inject({
    method: 'POST',
    url: '/api/v0/licenses/validate',
    headers: { ...headers },
    payload: { key, productId },
    remoteAddress: address,
  })
}

async function setUp(t: TestContext, database: TestDatabase, options: Partial<ProtectionOptions>) {
  const test = await buildTestApp(t, database, { protection: protection(options) })
  const client = await clientKey(test.app, test.headers, test.productId)
  const license = await createLicense(test.app, test.headers, { productId: test.productId })
  return { ...test, client, license }
}

describeEachDatabase('rate limits', (database) => {
  it('answers 429 rate_limited with Retry-After and RateLimit headers when a client IP exceeds its budget', async (t) => {
    const { app, client, productId, license } = await setUp(t, database, { ipPerMinute: 3 })
    const answers = []
    for (let i = 0; i < 4; i++) {
      answers.push(await validate(app, client, productId, license.key))
    }
    assert.deepEqual(
      answers.map((res) => [res.statusCode, res.headers['ratelimit-remaining']]),
      [
        [200, '2'],
        [200, '1'],
        [200, '0'],
        [429, '0'],
      ],
    )
    const refused = answers[3]
    assert.ok(refused !== undefined)
    expectProblem(refused, 429, 'rate_limited')
    assert.equal(refused.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.equal(refused.headers['ratelimit-limit'], '3')
    assert.equal(refused.headers['ratelimit-reset'], '60')
    assert.equal(refused.headers['retry-after'], '60')
    // Another address has its own budget; the probes are exempt.
    assert.equal((await validate(app, client, productId, license.key, '198.51.100.1')).statusCode, 200)
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      const res = await app.inject({ url, remoteAddress: '203.0.113.7' })
      assert.equal(res.statusCode, 200, url)
      assert.equal(res.headers['ratelimit-limit'], undefined, url)
    }
  })

  it('counts unauthenticated requests and documentation in the address budget when no key authenticates', async (t) => {
    const { app } = await setUp(t, database, { ipPerMinute: 2 })
    const statuses = []
    for (const url of ['/api/v0/products', '/openapi.json', '/api/v0/products']) {
      statuses.push((await app.inject({ url, remoteAddress: '203.0.113.9' })).statusCode)
    }
    assert.deepEqual(statuses, [401, 200, 429])
  })

  it('gives a management key its own budgets for the management API and the application-facing routes, whatever its address', async (t) => {
    // The set-up took two of the management budget (a client key, a license).
    const { app, headers, productId, license } = await setUp(t, database, { keyPerMinute: 4, ipPerMinute: 1 })
    const management = []
    for (let i = 0; i < 3; i++) {
      management.push((await app.inject({ url: '/api/v0/products', headers })).statusCode)
    }
    assert.deepEqual(management, [200, 200, 429])
    // The application-facing budget is untouched, and the per-IP budget (1) does not apply.
    const applicationFacing = []
    for (let i = 0; i < 5; i++) {
      applicationFacing.push((await validate(app, headers, productId, license.key)).statusCode)
    }
    assert.deepEqual(applicationFacing, [200, 200, 200, 200, 429])
  })

  it('believes X-Forwarded-For only when the proxy is trusted', async (t) => {
    const forwarded = (app: App, client: object, productId: ProductId, key: string, from: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers: { ...client, 'x-forwarded-for': from },
        payload: { key, productId },
        remoteAddress: '10.0.0.2',
      })
    const untrusted = await setUp(t, database, { ipPerMinute: 1 })
    assert.equal(
      (
        await forwarded(
          untrusted.app,
          untrusted.client,
          untrusted.productId,
          untrusted.license.key,
          '203.0.113.1',
        )
      ).statusCode,
      200,
    )
    assert.equal(
      (
        await forwarded(
          untrusted.app,
          untrusted.client,
          untrusted.productId,
          untrusted.license.key,
          '203.0.113.2',
        )
      ).statusCode,
      429,
    )

    const trusted = await buildTestApp(t, database, {
      protection: protection({ ipPerMinute: 1 }),
      trustProxy: true,
    })
    const client = await clientKey(trusted.app, trusted.headers, trusted.productId)
    const license = await createLicense(trusted.app, trusted.headers, { productId: trusted.productId })
    for (const from of ['203.0.113.1', '203.0.113.2']) {
      assert.equal(
        (await forwarded(trusted.app, client, trusted.productId, license.key, from)).statusCode,
        200,
      )
    }
  })

  it('documents 429 rate_limited on every API operation', async (t) => {
    const { app } = await buildTestApp(t, database)
    await app.ready()
    const document = app.swagger() as unknown as {
      paths: Record<string, Record<string, { responses: object }>>
    }
    for (const [path, operations] of Object.entries(document.paths)) {
      // A path item may also name its servers (the /operator sign-in routes: the root).
      for (const [method, operation] of Object.entries(operations).filter(([key]) => key !== 'servers')) {
        assert.ok('429' in operation.responses, `${method} ${path}`)
      }
    }
  })
})

describeEachDatabase('the key-guessing guard', (database) => {
  it('blocks an address after too many unknown keys, for known and unknown keys alike, and leaves other addresses alone', async (t) => {
    const { app, client, productId, license } = await setUp(t, database, {
      guessLimit: 3,
      guessBlockSeconds: 900,
    })
    for (let i = 0; i < 3; i++) {
      expectProblem(await validate(app, client, productId, unknownKey), 404, 'license_not_found')
    }
    const known = await validate(app, client, productId, license.key)
    const unknown = await validate(app, client, productId, unknownKey)
    for (const res of [known, unknown]) {
      const problem = expectProblem(res, 429, 'rate_limited')
      assert.match(problem.detail, /unknown license keys/)
      assert.equal(res.headers['retry-after'], '900')
    }
    // The same answer whether the key exists: only the request id differs.
    const { requestId: _a, ...knownProblem } = known.json()
    const { requestId: _b, ...unknownProblem } = unknown.json()
    assert.deepEqual(knownProblem, unknownProblem)
    // Every by-key route refuses that address.
    for (const url of [
      '/api/v0/licenses/activate',
      '/api/v0/licenses/tokens',
      '/api/v0/licenses/deactivate',
      '/api/v0/licenses/heartbeat',
      '/api/v0/licenses/usage',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url,
        headers: client,
        payload: { key: license.key, productId, fingerprint: 'machine-1' },
        remoteAddress: '203.0.113.7',
      })
      expectProblem(res, 429, 'rate_limited')
    }
    // Another address is unaffected.
    assert.equal((await validate(app, client, productId, license.key, '198.51.100.1')).statusCode, 200)
  })

  it('does not count known keys, other errors or management keys', async (t) => {
    const { app, headers, client, productId, license } = await setUp(t, database, { guessLimit: 2 })
    for (let i = 0; i < 5; i++) {
      assert.equal((await validate(app, client, productId, license.key)).statusCode, 200)
      expectProblem(await validate(app, headers, productId, unknownKey), 404, 'license_not_found')
    }
    expectProblem(await validate(app, client, productId, unknownKey), 404, 'license_not_found')
    assert.equal((await validate(app, client, productId, license.key)).statusCode, 200)
  })
})

describe('limits across processes sharing Redis', { skip: redisSkip }, () => {
  async function redisApp(t: TestContext, url: string, options: Partial<ProtectionOptions>) {
    const redis = new Redis(url, { maxRetriesPerRequest: 1 })
    redis.on('error', () => {}) // redis-server stops before the client after the test
    t.after(() => redis.disconnect())
    const counters: CounterStore = redisCounters(redis)
    // Each app stands for one `keyturn serve` process: its own counters client, one shared Redis.
    return buildTestApp(t, sqliteTestDatabase(), { protection: protection({ ...options, counters }) })
  }

  it('enforces one address budget and one guard over every app that shares the Redis', async (t) => {
    const url = await startRedis(t)
    const first = await redisApp(t, url, { ipPerMinute: 4, guessLimit: 2 })
    const second = await redisApp(t, url, { ipPerMinute: 4, guessLimit: 2 })
    const statuses = []
    for (const { app } of [first, first, second, second, first]) {
      statuses.push((await app.inject({ url: '/api/v0/products', remoteAddress: '203.0.113.50' })).statusCode)
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 429])

    // The guard: two unknown keys at the first app block the address at the second.
    const firstClient = await clientKey(first.app, first.headers, first.productId)
    const secondClient = await clientKey(second.app, second.headers, second.productId)
    for (let i = 0; i < 2; i++) {
      expectProblem(
        await validate(first.app, firstClient, first.productId, unknownKey, '203.0.113.60'),
        404,
        'license_not_found',
      )
    }
    const license = await createLicense(second.app, second.headers, { productId: second.productId })
    expectProblem(
      await validate(second.app, secondClient, second.productId, license.key, '203.0.113.60'),
      429,
      'rate_limited',
    )
    assert.equal(
      (await validate(second.app, secondClient, second.productId, license.key, '203.0.113.61')).statusCode,
      200,
    )
  })
})
