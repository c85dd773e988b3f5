import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

// The built CLI, as `npm start` runs it (`npm test` builds first).
const cli = fileURLToPath(new URL('../dist/main.js', import.meta.url))
/** Upper bound for a child process to start or stop; it normally takes well under a second. */
const patience = 20_000

interface Target {
  readonly kind: 'sqlite' | 'postgres'
  /** Variables for a fresh, empty database, removed after the test. */
  fresh(t: TestContext): Promise<Record<string, string>>
}

const sqlite: Target = {
  kind: 'sqlite',
  async fresh(t) {
    const dir = mkdtempSync(join(tmpdir(), 'keyturn-cli-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    return { KEYTURN_DATABASE_URL: `sqlite:${join(dir, 'data', 'keyturn.db')}` }
  },
}

function postgres(url: string): Target {
  const run = async (text: string) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      await client.query(text)
    } finally {
      await client.end()
    }
  }
  return {
    kind: 'postgres',
    async fresh(t) {
      const schema = `t_${randomBytes(6).toString('hex')}`
      await run(`create schema ${schema}`)
      t.after(() => run(`drop schema ${schema} cascade`))
      const withSchema = new URL(url)
      withSchema.searchParams.set('options', `-c search_path=${schema}`)
      return {
        KEYTURN_DATABASE_URL: withSchema.toString(),
        KEYTURN_SECRET: 'test-master-secret-with-at-least-32-characters',
      }
    },
  }
}

interface Run {
  readonly child: ChildProcess
  stdout: string
  stderr: string
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Starts `keyturn <args>` with only the given variables (and PATH); killed after the test if still running. */
function keyturn(t: TestContext, args: readonly string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const run: Run = { child, stdout: '', stderr: '', exit }
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    run.stdout += chunk
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    run.stderr += chunk
  })
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
    }
  })
  return run
}

/** Resolves with the first match of `pattern` in the child's stdout; fails after `patience`. */
function waitForOutput(run: Run, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = run.stdout.match(pattern)
      if (match) {
        cleanup()
        resolve(match)
      }
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`no ${pattern} within ${patience} ms\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`))
    }, patience)
    const exited = () => {
      cleanup()
      reject(new Error(`exited before printing ${pattern}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`))
    }
    const cleanup = () => {
      clearTimeout(timer)
      run.child.stdout?.off('data', check)
      run.child.off('exit', exited)
    }
    run.child.stdout?.on('data', check)
    run.child.once('exit', exited)
    check()
  })
}

function exitWithin(run: Run): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`still running after ${patience} ms:\n${run.stdout}`)),
      patience,
    )
  })
  return Promise.race([run.exit, timeout]).finally(() => clearTimeout(timer))
}

const listening = /Keyturn is listening on (http:\/\/[^\s]+)/

function describeEachTarget(title: string, suite: (target: Target) => void): void {
  const url = process.env.TEST_POSTGRES_URL
  const skip = url ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')
  describe(`${title} [sqlite]`, () => suite(sqlite))
  describe(`${title} [postgres]`, { skip }, () => suite(postgres(url ?? '')))
}

describeEachTarget('keyturn serve', (target) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`prints its URL, answers there and exits 0 on ${signal}`, async (t) => {
      const run = keyturn(t, ['serve'], { ...(await target.fresh(t)), PORT: '0', LOG_LEVEL: 'info' })

      const [, url] = await waitForOutput(run, listening)
      const health = await fetch(`${url}/healthz`)
      assert.equal(health.status, 200)
      run.child.kill(signal)

      assert.deepEqual(await exitWithin(run), { code: 0, signal: null }, run.stderr)
      assert.equal(run.stderr, '')
    })
  }

  it('prints the first admin key in a banner after the log lines, and it authenticates', async (t) => {
    const run = keyturn(t, ['serve', '--port', '0'], { ...(await target.fresh(t)), LOG_LEVEL: 'info' })

    const [, url] = await waitForOutput(run, listening)
    const [secret] = await waitForOutput(run, /kt_admin_[A-Za-z0-9]+/)
    const startUp = run.stdout
    const res = await fetch(`${url}/api/v0/products`, { headers: { authorization: `Bearer ${secret}` } })
    assert.equal(res.status, 200, await res.text())
    const lines = startUp.split('\n')
    const lastLog = lines.findLastIndex((line) => line.startsWith('{'))
    const banner = lines.findIndex((line) => line.includes(secret))
    assert.ok(lastLog >= 0 && lastLog < banner, `the banner comes after the start-up logs:\n${startUp}`)
    run.child.kill('SIGTERM')
    assert.equal((await exitWithin(run)).code, 0)
  })

  it('exits 1 with every configuration problem on stderr and nothing on stdout', async (t) => {
    const env = { ...(await target.fresh(t)), PORT: 'abc', LOG_LEVEL: 'loud' }
    const run = keyturn(t, ['serve'], env)

    assert.deepEqual(await exitWithin(run), { code: 1, signal: null })
    assert.equal(
      run.stderr,
      'Invalid configuration:\n  - PORT must be integer\n  - LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent\n',
    )
    assert.equal(run.stdout, '')
  })
})

describeEachTarget('keyturn migrate', (target) => {
  it('applies the migrations, then reports the database up to date', async (t) => {
    const env = await target.fresh(t)

    const first = keyturn(t, ['migrate'], env)
    assert.deepEqual(await exitWithin(first), { code: 0, signal: null }, first.stderr)
    const second = keyturn(t, ['migrate'], env)
    assert.deepEqual(await exitWithin(second), { code: 0, signal: null }, second.stderr)

    assert.match(first.stdout, /^Applied: \d{4}-\d{2}-\d{2}-/)
    assert.equal(second.stdout, 'The database is up to date.\n')
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

describe('keyturn --help', () => {
  it('lists every command, and the exit codes, with an example', async (t) => {
    const run = keyturn(t, ['--help'], {})

    assert.equal((await exitWithin(run)).code, 0)
    for (const command of ['serve', 'migrate', 'products', 'api-keys', 'licenses', 'activations', 'token']) {
      assert.match(run.stdout, new RegExp(`\\n  ${command} `), command)
    }
    assert.match(
      run.stdout,
      /Exit codes: 0 done, 1 refused by the API or not valid, 2 usage error, 3 cannot reach/,
    )
    assert.match(run.stdout, /\nExample:\n {2}export KEYTURN_URL=/)
  })

  it('explains each command and its flags, with an example, and exits 0', async (t) => {
    const runs = apiCommands.map((command) => ({
      command,
      run: keyturn(t, [...command.split(' '), '--help'], {}),
    }))

    for (const { command, run } of runs) {
      assert.equal((await exitWithin(run)).code, 0, `${command}: ${run.stderr}`)
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

describe('keyturn', () => {
  it('exits 2 on an unknown command', async (t) => {
    const run = keyturn(t, ['serv'], {})

    assert.equal((await exitWithin(run)).code, 2)
    assert.match(run.stderr, /unknown command 'serv'/)
  })
})
