import assert from 'node:assert/strict'
import { get } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import { redisSkip, startRedis } from '@keyturn/server/testing/redis-server'
import { sqliteServerEnvironment } from '@keyturn/server/testing/server-environments'
import { type Watched, waitFor, watchKeyturn } from './testing/keyturn-process.js'

const patience = 60_000
const listening = /Keyturn is listening on (http:\/\/[^\s]+)/

function serve(t: TestContext, args: readonly string[], env: Record<string, string>): Watched {
  return watchKeyturn(t, ['serve', ...args], env, {
    patience,
    beforeKill: (run) => {
      // The primary forwards SIGTERM to its workers.
      run.child.kill('SIGTERM')
    },
  })
}

/** One unauthenticated request on a connection of its own (so the cluster may hand it to any worker). */
function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(`${url}/api/v0/products`, { agent: false }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode ?? 0))
    }).on('error', reject)
  })
}

async function statuses(urls: readonly string[]): Promise<number[]> {
  const answers = []
  for (const url of urls) {
    answers.push(await status(url))
  }
  return answers
}

// On SQLite only: the counters live in the cluster's primary or in Redis, never in the database, so
// a run on PostgreSQL would start five more processes to take the same paths.
describe('keyturn serve rate limits across processes', () => {
  const environment = sqliteServerEnvironment()
  it('enforces one per-IP limit over every worker of --workers 2 without Redis', async (t) => {
    const env = { ...(await environment.fresh(t)), KEYTURN_RATE_LIMIT_IP_PER_MINUTE: '6' }
    const run = serve(t, ['--workers', '2'], env)
    const [, url = ''] = await waitFor(run, listening)

    const answers = await statuses(Array(12).fill(url))
    assert.deepEqual(answers, [...Array(6).fill(401), ...Array(6).fill(429)])
  })

  it('enforces one per-IP limit over two keyturn serve processes sharing Redis', {
    skip: redisSkip,
  }, async (t) => {
    const redisUrl = await startRedis(t)
    const limits = { KEYTURN_RATE_LIMIT_IP_PER_MINUTE: '4', KEYTURN_REDIS_URL: redisUrl }
    // Two processes of one deployment: one database, one Redis.
    const env = { ...(await environment.fresh(t)), ...limits }
    const first = serve(t, [], env)
    const second = serve(t, [], env)
    const [[, a = ''], [, b = '']] = await Promise.all([
      waitFor(first, listening),
      waitFor(second, listening),
    ])

    assert.deepEqual(await statuses([a, a, a, b, b, a]), [401, 401, 401, 401, 429, 429])
  })
})
