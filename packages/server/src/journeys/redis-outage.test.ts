import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { redisSkip, startRedis } from '../testing/redis-server.js'
import { sqliteServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'
import { startTcpProxy } from '../testing/tcp-proxy.js'

const adminKey = 'kt_admin_redis-outage-test-key-0000000001'
const perMinute = 10

/**
 * Redis holds the shared rate-limit counts (KEYTURN_REDIS_URL). It goes away (a TCP proxy the test
 * controls refuses and cuts connections) and comes back under a running `keyturn serve`.
 */
describe('Redis goes away and comes back', { skip: redisSkip }, () => {
  it('serves requests uncounted meanwhile, logs it once, and enforces the shared limit again', async (t) => {
    const redis = new URL(await startRedis(t))
    const proxy = await startTcpProxy(t, { host: redis.hostname, port: Number(redis.port) })
    const env = await sqliteServerEnvironment().fresh(t)
    const keyturn = await startServerProcess(t, {
      ...env,
      LOG_LEVEL: 'warn',
      KEYTURN_ADMIN_KEY: adminKey,
      KEYTURN_REDIS_URL: `redis://${proxy.host}:${proxy.port}`,
      KEYTURN_RATE_LIMIT_KEY_PER_MINUTE: String(perMinute),
    })
    let logs = ''
    keyturn.child.stdout?.on('data', (chunk: string) => {
      logs += chunk
    })
    const products = async () =>
      (await fetch(`${keyturn.url}/api/v0/products`, { headers: { authorization: `Bearer ${adminKey}` } }))
        .status
    const ready = async () => (await (await fetch(`${keyturn.url}/readyz`)).json()) as { degraded?: string[] }
    const redisReachable = async () => {
      const metrics = await (await fetch(`${keyturn.url}/metrics`)).text()
      return /^keyturn_redis_reachable (\d)/m.exec(metrics)?.[1]
    }

    assert.deepEqual([await products(), await products()], [200, 200])
    assert.equal(await redisReachable(), '1')

    proxy.down()
    proxy.cut()
    // More requests than the limit allows: none is refused, none waits for Redis.
    const started = performance.now()
    const during = await Promise.all(Array.from({ length: perMinute + 5 }, () => products()))
    assert.deepEqual(during, Array(perMinute + 5).fill(200))
    assert.ok(performance.now() - started < 5000)
    assert.deepEqual((await ready()).degraded, ['redis'])
    assert.equal(await redisReachable(), '0')

    // Back: ioredis reconnects by itself (within its backoff), and the count goes on where it was.
    proxy.up()
    const deadline = performance.now() + 15_000
    while ((await ready()).degraded !== undefined && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.equal((await ready()).degraded, undefined)
    assert.equal(await redisReachable(), '1')
    const after: number[] = []
    for (let n = 0; n < perMinute; n++) {
      after.push(await products())
    }
    // Two were counted before the outage, none during it: the ninth after it is the eleventh.
    assert.deepEqual(after, [...Array(perMinute - 2).fill(200), 429, 429])

    const lines = logs.split('\n').filter((line) => line.includes('Redis'))
    assert.equal(lines.filter((line) => line.includes('Redis does not answer')).length, 1, logs)
    assert.equal(lines.filter((line) => line.includes('Redis answers again')).length, 1, logs)
    assert.equal(keyturn.child.exitCode, null)

    // Redis gone again, the server stops promptly and cleanly (no wait for Redis).
    proxy.down()
    proxy.cut()
    const exited = new Promise((resolve) => keyturn.child.once('exit', resolve))
    keyturn.child.kill('SIGTERM')
    assert.equal(await exited, 0)
  })
})
