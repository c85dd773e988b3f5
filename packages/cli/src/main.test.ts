import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
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

/**
 * Upper bound for a child process to start or stop: it normally takes a second or two, but a
 * machine running the whole suite beside other work has taken more than 20 s.
 */
const patience = 60_000

/** Starts `keyturn <args>` with only the given variables (and PATH); killed after the test if still running. */
function keyturn(t: TestContext, args: readonly string[], env: Record<string, string>): Watched {
  return watchKeyturn(t, args, env, { patience })
}

const listening = /Keyturn is listening on (http:\/\/[^\s]+)/

describeEachServerEnvironment('keyturn serve', (environment) => {
  // One process for the banner, the key and the heap bound: each start costs a second or two.
  it('prints its URL and the first admin key in a banner after the log lines, answers there with it, keeps the young generation within KEYTURN_HEAP_SEMI_SPACE_MB and exits 0 on SIGTERM', async (t) => {
    const env = { ...(await environment.fresh(t)), LOG_LEVEL: 'info', KEYTURN_HEAP_SEMI_SPACE_MB: '1' }
    const run = keyturn(t, ['serve', '--port', '0'], env)

    const [, url] = await waitFor(run, listening)
    const [secret] = await waitFor(run, /kt_admin_[A-Za-z0-9]+/)
    const startUp = run.stdout
    const health = await fetch(`${url}/healthz`)
    assert.equal(health.status, 200)
    const res = await fetch(`${url}/api/v0/products`, { headers: { authorization: `Bearer ${secret}` } })
    assert.equal(res.status, 200, await res.text())
    const lines = startUp.split('\n')
    const lastLog = lines.findLastIndex((line) => line.startsWith('{'))
    const banner = lines.findIndex((line) => line.includes(secret))
    assert.ok(lastLog >= 0 && lastLog < banner, `the banner comes after the start-up logs:\n${startUp}`)

    // Left to V8, loading the modules grows the young generation to 16–32 MB, and these 200
    // requests grow it to 8–16 MiB (KEYTURN_HEAP_SEMI_SPACE_MB=0), 4 MiB with a cap of 2. Node 24's
    // V8 also lends the new space pages beyond its capacity while an incremental marking runs, and
    // takes them back at the next scavenge (CI read 2.25 MiB once): so the reads go on, each one
    // allocating, until one shows the capacity.
    for (let burst = 0; burst < 10; burst++) {
      await Promise.all(Array.from({ length: 20 }, () => fetch(`${url}/metrics`).then((res) => res.text())))
    }
    const cap = 2 * 1024 * 1024
    const youngReads: number[] = []
    let youngBytes = Number.POSITIVE_INFINITY
    for (let read = 0; read < 50 && youngBytes > cap; read++) {
      const metrics = await (await fetch(`${url}/metrics`)).text()
      youngBytes = Number(/^nodejs_heap_space_size_total_bytes\{space="new"\} (\d+)$/m.exec(metrics)?.[1])
      youngReads.push(youngBytes)
    }
    assert.ok(
      youngBytes > 0 && youngBytes <= cap,
      `two semi-spaces of 1 MiB at most: ${youngReads.join(', ')}`,
    )
    run.child.kill('SIGTERM')

    assert.deepEqual(await exitWithin(run), { code: 0, signal: null }, run.stderr)
    assert.equal(run.stderr, '')
  })

  it('accepts KEYTURN_ADMIN_KEY from the first answer on: never a 401, /readyz ok only once it works, and exits 0 on SIGINT', async (t) => {
    const baseUrl = await closedPortUrl()
    const adminKey = 'kt_admin_configured-key-for-the-readiness-test'
    const env = { ...(await environment.fresh(t)), PORT: new URL(baseUrl).port, KEYTURN_ADMIN_KEY: adminKey }
    const run = keyturn(t, ['serve'], env)

    const probes = await probeWhileStarting(run, baseUrl, adminKey)
    await waitFor(run, listening)

    assert.deepEqual(
      probes.filter((probe) => probe.api === 401 || (probe.readyz === 200 && probe.api !== 200)),
      [],
      'no 401 for the configured key, and no ok from /readyz before the key works',
    )
    const res = await fetch(`${baseUrl}/api/v0/products`, {
      headers: { authorization: `Bearer ${adminKey}` },
    })
    assert.equal(res.status, 200)
    run.child.kill('SIGINT')
    assert.deepEqual(await exitWithin(run), { code: 0, signal: null }, run.stderr)
    assert.equal(run.stderr, '')
  })

  // In-process: nothing starts on a configuration that is refused.
  it('exits 1 with every configuration problem on stderr and nothing on stdout', async (t) => {
    const env = { ...(await environment.fresh(t)), PORT: 'abc', LOG_LEVEL: 'loud' }
    const run = await keyturnInProcess(['serve'], env)

    assert.deepEqual([run.code, run.signal], [1, null])
    assert.equal(
      run.stderr,
      'Invalid configuration:\n  - PORT must be integer\n  - LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent\n',
    )
    assert.equal(run.stdout, '')
  })
})

describeEachServerEnvironment('keyturn migrate', (environment) => {
  it('applies the migrations, then reports the database up to date', async (t) => {
    const env = await environment.fresh(t)

    const first = await keyturnInProcess(['migrate'], env)
    assert.deepEqual([first.code, first.signal], [0, null], first.stderr)
    const second = await keyturnInProcess(['migrate'], env)
    assert.deepEqual([second.code, second.signal], [0, null], second.stderr)

    assert.match(first.stdout, /^Applied: \d{4}-\d{2}-\d{2}-/)
    assert.equal(second.stdout, 'The database is up to date.\n')
  })
})

describeEachServerEnvironment('keyturn operators create', (environment) => {
  it('creates an invited operator and prints their one-time link once; the email stays unique', async (t) => {
    const env = await environment.fresh(t)

    const run = await keyturnInProcess(
      ['operators', 'create', '--email', 'ada@example.com', '--role', 'owner'],
      env,
    )
    assert.deepEqual([run.code, run.signal], [0, null], run.stderr)
    assert.match(run.stdout, /^Created owner ada@example\.com \(opr_\w+\), invited\./)
    assert.match(run.stdout, /\/dashboard\/invitation#[A-Za-z0-9_-]{43}\n$/)

    const again = await keyturnInProcess(['operators', 'create', '--email', 'ADA@example.com'], env)
    assert.notEqual(again.code, 0)
    assert.match(again.stderr, /Another operator has this email/)
    const bad = await keyturnInProcess(
      ['operators', 'create', '--email', 'x@example.com', '--role', 'king'],
      env,
    )
    assert.equal(bad.code, 2, bad.stderr)

    const second = await keyturnInProcess(['operators', 'create', '--email', 'bo@example.com'], env)
    assert.equal(second.code, 0, second.stderr)
    const promoted = await keyturnInProcess(['operators', 'update', 'BO@example.com', '--role', 'admin'], env)
    assert.equal(promoted.code, 0, promoted.stderr)
    assert.match(promoted.stdout, /^bo@example\.com \(opr_\w+\): admin, invited\.\n$/)
    const list = await keyturnInProcess(['operators', 'list'], env)
    assert.equal(list.code, 0, list.stderr)
    assert.match(list.stdout, /^ID +EMAIL +ROLE +STATUS +NAME\nopr_\w+ +ada@example\.com +owner +invited/)
    assert.match(list.stdout, /bo@example\.com +admin +invited/)
    const nothing = await keyturnInProcess(['operators', 'update', 'bo@example.com'], env)
    assert.equal(nothing.code, 2, nothing.stderr)
    assert.match(nothing.stderr, /give --role, --disable or --enable/)
  })
})

/** Every command but serve and migrate (their own suites above). */
const apiCommands = [
  'products create',
  'products list',
  'products get',
  'products update',
  'products suspend',
  'products resume',
  'products keys',
  'products rotate-key',
  'api-keys create',
  'api-keys list',
  'api-keys get',
  'api-keys delete',
  'licenses create',
  'licenses list',
  'licenses get',
  'licenses update',
  'licenses revoke',
  'licenses reinstate',
  'licenses validate',
  'licenses token',
  'licenses import',
  'licenses export',
  'activations list',
  'activations activate',
  'activations deactivate',
  'token verify',
]

// In-process (runKeyturn, as main.ts runs it): one process per command made this file slow and flaky.
describe('keyturn --help', () => {
  it('lists every command, and the exit codes, with an example', async () => {
    const run = await keyturnInProcess(['--help'])

    assert.equal(run.code, 0)
    for (const command of ['serve', 'migrate', 'products', 'api-keys', 'licenses', 'activations', 'token']) {
      assert.match(run.stdout, new RegExp(`\\n  ${command} `), command)
    }
    assert.match(
      run.stdout,
      /Exit codes: 0 done, 1 refused by the API or not valid, 2 usage error, 3 cannot reach/,
    )
    assert.match(run.stdout, /\nExample:\n {2}export KEYTURN_URL=/)
  })

  it('explains each command and its flags, with an example, and exits 0', async () => {
    const runs = await Promise.all(
      apiCommands.map(async (command) => ({
        command,
        run: await keyturnInProcess([...command.split(' '), '--help']),
      })),
    )

    for (const { command, run } of runs) {
      assert.equal(run.code, 0, `${command}: ${run.stderr}`)
      assert.match(run.stdout, new RegExp(`^Usage: keyturn ${command} `), command)
      assert.match(run.stdout, /\nExamples?:\n {2}(keyturn|TOKEN=)/, command)
      if (command !== 'token verify') {
        for (const flag of ['--url <url>', '--api-key <secret>', '--json']) {
          assert.ok(run.stdout.includes(`  ${flag} `), `${command}: ${flag}`)
        }
      }
    }
  })
})

// Through the built binary: main.ts hands runKeyturn's exit code to the process.
describe('keyturn', () => {
  it('prints its version with --version and -V, and exits 0', async (t) => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    const long = keyturn(t, ['--version'], {})
    // The short flag in-process: the binary's part (exit 0, stdout) is the same for both.
    const short = await keyturnInProcess(['-V'])

    assert.deepEqual([(await exitWithin(long)).code, short.code], [0, 0])
    assert.deepEqual([long.stdout, short.stdout], [`${version}\n`, `${version}\n`])
  })

  it('exits 2 on an unknown command', async (t) => {
    const run = keyturn(t, ['serv'], {})

    assert.equal((await exitWithin(run)).code, 2)
    assert.match(run.stderr, /unknown command 'serv'/)
  })

  it('exits 3 when the server cannot be reached, saying so on stderr', async (t) => {
    const url = await closedPortUrl()
    const run = keyturn(t, ['products', 'list'], { KEYTURN_URL: url, KEYTURN_API_KEY: 'kt_admin_x' })

    assert.deepEqual(await exitWithin(run), { code: 3, signal: null })
    assert.equal(run.stderr, `cannot reach the server: Cannot reach the Keyturn server at ${url}\n`)
    assert.equal(run.stdout, '')
  })
})
