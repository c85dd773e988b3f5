import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { closedPortUrl } from '@keyturn/server/testing/listening-app'
import { describeEachServerEnvironment } from '@keyturn/server/testing/server-environments'
import { keyturn as keyturnInProcess } from './testing/keyturn-in-process.js'
import {
  exitWithin,
  probeWhileStarting,
  type Watched,
  waitFor,
  watchKeyturn,
} from './testing/keyturn-process.js'

/** Upper bound for the cluster to start or stop: three processes, on a machine that may be busy. */
const patience = 60_000

/** Starts `keyturn <args>` with only PATH and `env`; killed (with its workers) after the test if still running. */
function keyturn(t: TestContext, args: readonly string[], env: Record<string, string>): Watched {
  return watchKeyturn(t, args, env, {
    patience,
    beforeKill: (run) => {
      for (const pid of workerPids(run)) {
        killQuietly(pid)
      }
    },
  })
}

const listening = /Keyturn is listening on (http:\/\/[^\s]+)/
const workersLine = /Keyturn started (\d+) worker processes \(pids ([\d, ]+)\)\./g

/** Every worker pid the primary reported, restarted ones included (they are on stderr). */
function workerPids(run: Watched): number[] {
  const started = [...run.stdout.matchAll(workersLine)].flatMap((match) => (match[2] ?? '').split(', '))
  const restarted = [...run.stderr.matchAll(/worker \d+ exited unexpectedly .*; started (\d+)/g)].map(
    (match) => match[1] ?? '',
  )
  return [...started, ...restarted].filter((pid) => pid !== '').map(Number)
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {}
}

function countOf(text: string, part: string): number {
  return text.split(part).length - 1
}

/** `count` requests at once, each with the admin key; resolves to their status codes. */
async function statuses(url: string, secret: string, count: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const res = await fetch(`${url}/api/v0/products`, { headers: { authorization: `Bearer ${secret}` } })
      await res.arrayBuffer()
      return res.status
    }),
  )
}

describeEachServerEnvironment('keyturn serve --workers 2', (environment) => {
  // A cluster start is costly (three processes), so one test goes through a database's life: the
  // first start's banner, key and SIGINT exit, a worker replaced, then a second start on the same
  // database with KEYTURN_ADMIN_KEY, whose workers must accept that new key from their first answer
  // on, and SIGTERM. (That a restart without KEYTURN_ADMIN_KEY adds no key is prepare's behaviour,
  // the same with or without workers: the server's own serve tests restart for it.)
  it('prints the banner and the first admin key once, replaces a worker that dies, exits 0 on SIGINT with every worker gone; a second start accepts KEYTURN_ADMIN_KEY from the first answer on (never a 401, /readyz ok only once it works), prints no key and exits 0 on SIGTERM', async (t) => {
    const env = await environment.fresh(t)
    const first = keyturn(t, ['serve', '--workers', '2'], env)

    const [, url = ''] = await waitFor(first, listening)
    const [secret = ''] = await waitFor(first, /kt_admin_[A-Za-z0-9]+/)
    assert.deepEqual(await statuses(url, secret, 20), Array(20).fill(200))
    const started = workerPids(first)
    assert.equal(started.length, 2, first.stdout)
    assert.ok(started.every(isAlive))
    assert.equal(countOf(first.stdout, 'Keyturn is listening on'), 1, first.stdout)
    assert.equal(countOf(first.stdout, 'First start: Keyturn created an admin API key'), 1, first.stdout)
    assert.deepEqual(
      [...new Set(first.stdout.match(/kt_admin_[A-Za-z0-9]+/g))],
      [secret],
      'one admin key, in the banner only',
    )
    assert.equal(first.stderr, '')

    const [killed] = started
    assert.ok(killed !== undefined, first.stdout)
    process.kill(killed, 'SIGKILL')
    await waitFor(
      first,
      new RegExp(`worker ${killed} exited unexpectedly \\(SIGKILL\\); started \\d+`),
      'stderr',
    )
    await waitFor(first, /worker \d+ is listening in its place/, 'stderr')
    assert.deepEqual(await statuses(url, secret, 10), Array(10).fill(200))
    const pids = workerPids(first)
    assert.equal(pids.filter(isAlive).length, 2, first.stderr)
    first.child.kill('SIGINT')
    assert.deepEqual(await exitWithin(first), { code: 0, signal: null }, first.stderr)
    assert.deepEqual(pids.filter(isAlive), [], 'no worker outlives the primary')

    const baseUrl = await closedPortUrl()
    const adminKey = 'kt_admin_configured-key-for-the-readiness-test'
    const second = keyturn(t, ['serve', '--workers', '2'], {
      ...env,
      PORT: new URL(baseUrl).port,
      KEYTURN_ADMIN_KEY: adminKey,
    })
    const probes = await probeWhileStarting(second, baseUrl, adminKey)
    await waitFor(second, listening)
    assert.deepEqual(
      probes.filter((probe) => probe.api === 401 || (probe.readyz === 200 && probe.api !== 200)),
      [],
      'no 401 for the configured key, and no ok from /readyz before the key works',
    )
    assert.deepEqual(await statuses(baseUrl, adminKey, 10), Array(10).fill(200))
    assert.deepEqual(await statuses(baseUrl, secret, 4), Array(4).fill(200), 'the first key still works')
    const secondPids = workerPids(second)
    assert.equal(secondPids.length, 2, second.stdout)
    second.child.kill('SIGTERM')
    assert.deepEqual(await exitWithin(second), { code: 0, signal: null }, second.stderr)
    assert.deepEqual(secondPids.filter(isAlive), [], 'no worker outlives the primary')
    assert.doesNotMatch(second.stdout, /kt_admin_/, 'a configured key is never printed')
    assert.equal(second.stderr, '')
  })
})

describe('keyturn serve --workers, refused', () => {
  for (const value of ['0', 'abc', '65', '1.5']) {
    // In-process: commander refuses the flag before anything starts.
    it(`exits 2 with a usage error on --workers ${value}`, async () => {
      const run = await keyturnInProcess(['serve', '--workers', value], {
        KEYTURN_DATABASE_URL: 'sqlite::memory:',
      })

      assert.deepEqual([run.code, run.signal], [2, null])
      assert.match(
        run.stderr,
        /option '--workers <n>' argument '.*' is invalid\. Expected a whole number from 1 to 64\./,
      )
      assert.equal(run.stdout, '')
    })
  }

  it('exits 1 on an in-memory database, which several processes cannot share', async (t) => {
    const run = keyturn(t, ['serve', '--workers', '2'], {
      KEYTURN_DATABASE_URL: 'sqlite::memory:',
      PORT: '0',
    })

    assert.deepEqual(await exitWithin(run), { code: 1, signal: null })
    assert.match(run.stderr, /in-memory database \(sqlite::memory:\) lives in one process/)
    assert.equal(run.stdout, '')
  })
})
