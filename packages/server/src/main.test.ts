import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { it, type TestContext } from 'node:test'
import { ConfigError, migrate, type RunningServer, serve } from './main.js'
import { describeEachServerEnvironment, sqliteServerEnvironment } from './testing/server-environments.js'

/** Collects what `serve` prints for the operator. */
function recorder() {
  const lines: string[] = []
  return { lines, output: { print: (line: string) => lines.push(line) } }
}

async function start(t: TestContext, env: Record<string, string>) {
  const { lines, output } = recorder()
  const server = await serve(env, output)
  let isClosed = false
  const close = async () => {
    if (!isClosed) {
      isClosed = true
      await server.close()
    }
  }
  t.after(close)
  return { server, lines, close }
}

function printedAdminKeys(lines: readonly string[]): string[] {
  return lines.flatMap((line) => line.match(/kt_admin_[A-Za-z0-9]+/g) ?? [])
}

async function get(server: RunningServer, path: string, secret?: string) {
  const headers: Record<string, string> = secret === undefined ? {} : { authorization: `Bearer ${secret}` }
  const res = await fetch(`${server.url}${path}`, { headers })
  return { status: res.status, body: await res.text() }
}

describeEachServerEnvironment('serve', (environment) => {
  // One database for the first start, the restart and the answer without a key: each fresh one
  // is migrated from scratch.
  it('prints an admin key once on the first start, which then authenticates over HTTP (401 unauthenticated without a key)', async (t) => {
    const env = await environment.fresh(t)

    const first = await start(t, env)
    const [secret, ...others] = printedAdminKeys(first.lines)
    assert.ok(secret, first.lines.join('\n'))
    assert.deepEqual(new Set(others), new Set([secret]), 'one key, printed in the banner and the curl line')
    assert.ok(
      first.lines.some((line) => line.includes(first.server.url)),
      `the banner names the URL:\n${first.lines.join('\n')}`,
    )
    assert.ok(
      first.lines.some((line) => line.includes(`${first.server.url}/dashboard`)),
      `the banner links to the dashboard:\n${first.lines.join('\n')}`,
    )
    const setupLinks = first.lines.join('\n').match(/\/dashboard\/setup#[A-Za-z0-9_-]{43}\b/g) ?? []
    assert.equal(setupLinks.length, 1, `the banner prints one setup link:\n${first.lines.join('\n')}`)
    const products = await get(first.server, '/api/v0/products', secret)
    assert.equal(products.status, 200, products.body)
    const anonymous = await fetch(`${first.server.url}/api/v0/licenses`)
    assert.equal(anonymous.status, 401)
    assert.equal(anonymous.headers.get('content-type'), 'application/problem+json; charset=utf-8')
    assert.equal(((await anonymous.json()) as { code: string }).code, 'unauthenticated')
    await first.close()

    const second = await start(t, env)
    assert.deepEqual(printedAdminKeys(second.lines), [], second.lines.join('\n'))
    assert.match(second.lines.join('\n'), /Keyturn is listening on http:\/\/127\.0\.0\.1:\d+/)
    const again = await get(second.server, '/api/v0/products', secret)
    assert.equal(again.status, 200, 'the key survives the restart')
  })

  it('makes KEYTURN_ADMIN_KEY work, prints no key and adds none on a restart', async (t) => {
    const adminKey = 'kt_admin_configured-by-the-operator-0123456789'
    const env = { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey }

    const first = await start(t, env)
    assert.deepEqual(printedAdminKeys(first.lines), [])
    const keys = await get(first.server, '/api/v0/api-keys', adminKey)
    assert.equal(keys.status, 200, keys.body)
    assert.equal(JSON.parse(keys.body).totalCount, 1, keys.body)
    await first.close()

    const second = await start(t, env)
    const after = await get(second.server, '/api/v0/api-keys', adminKey)
    assert.equal(after.status, 200, after.body)
    assert.equal(JSON.parse(after.body).totalCount, 1, `no duplicate key: ${after.body}`)
    assert.deepEqual(printedAdminKeys(second.lines), [])
  })

  it('finishes an in-flight request before close() resolves', async (t) => {
    const adminKey = 'kt_admin_configured-by-the-operator-0123456789'
    const { server, close } = await start(t, { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey })
    const body = JSON.stringify({ name: 'Sent while the server stops' })

    // `Expect: 100-continue` holds the body back until the server has taken the request, so the
    // request is provably in flight when close() starts.
    const req = request(`${server.url}/api/v0/products`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${adminKey}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
    })
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      })
      req.on('error', reject)
    })
    await new Promise<void>((resolve) => req.once('continue', resolve))

    let hasClosed = false
    const closing = close().then(() => {
      hasClosed = true
    })
    await refusesNewConnections(server.url)
    assert.equal(hasClosed, false, 'close() waits for the request')
    req.end(body)

    const res = await response
    await closing
    assert.equal(res.status, 201, res.body)
    assert.equal(JSON.parse(res.body).name, 'Sent while the server stops')
  })

  it('creates no admin key when the port is taken, so the next start still prints one', async (t) => {
    const env = await environment.fresh(t)
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())))
    const address = blocker.address()
    assert.ok(address !== null && typeof address === 'object')

    await assert.rejects(
      serve({ ...env, PORT: String(address.port) }, recorder().output),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError, String(error))
        assert.match(error.message, new RegExp(`port ${address.port} on 127\\.0\\.0\\.1 is already in use`))
        assert.match(error.message, /PORT=\d+ keyturn serve/, 'says how to choose another port')
        return true
      },
    )

    const { lines } = await start(t, env)
    assert.equal(new Set(printedAdminKeys(lines)).size, 1, lines.join('\n'))
  })

  it('stops before opening the database when the configuration is bad', async (t) => {
    const env: Record<string, string> = { ...(await environment.fresh(t)), PORT: 'abc', LOG_LEVEL: 'loud' }

    await assert.rejects(serve(env, recorder().output), (error: unknown) => {
      assert.ok(error instanceof ConfigError)
      assert.deepEqual(error.problems, [
        'PORT must be integer',
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      ])
      return true
    })
    const url = env.KEYTURN_DATABASE_URL ?? ''
    if (url.startsWith('sqlite:')) {
      assert.equal(existsSync(url.slice('sqlite:'.length)), false, 'no database file was created')
    }
  })
})

describeEachServerEnvironment('migrate', (environment) => {
  it('applies the migrations once, then reports the database up to date', async (t) => {
    const env = await environment.fresh(t)
    const { lines, output } = recorder()

    await migrate(env, output)
    await migrate(env, output)

    assert.equal(lines.length, 2, lines.join('\n'))
    assert.match(lines[0] ?? '', /^Applied: \d{4}-\d{2}-\d{2}-/)
    assert.equal(lines[1], 'The database is up to date.')
  })
})

describeEachServerEnvironment('the generated master secret', (environment) => {
  if (environment.kind !== 'sqlite') {
    it('is not generated: PostgreSQL requires KEYTURN_SECRET', async (t) => {
      const { KEYTURN_SECRET: _, ...env } = await environment.fresh(t)
      await assert.rejects(serve(env, recorder().output), /KEYTURN_SECRET is required with PostgreSQL/)
    })
    return
  }
  it('is written to keyturn.secret beside the database with mode 0600 and reused', async (t) => {
    const env = await environment.fresh(t)
    const secretFile = join(
      dirname((env.KEYTURN_DATABASE_URL ?? '').slice('sqlite:'.length)),
      'keyturn.secret',
    )

    const first = await start(t, env)
    const [adminKey] = printedAdminKeys(first.lines)
    await first.close()
    const written = readFileSync(secretFile, 'utf8')
    assert.equal(statSync(secretFile).mode & 0o777, 0o600)
    assert.ok(written.trim().length >= 43, 'at least 256 bits, base64url')
    assert.equal(written.includes(adminKey ?? '-'), false)

    const second = await start(t, env)
    assert.equal(readFileSync(secretFile, 'utf8'), written)
    const res = await get(second.server, '/api/v0/products', adminKey)
    assert.equal(res.status, 200, 'digests made with the first secret still match')
  })
})

// On SQLite only: that is where pg must stay unloaded, and ioredis is loaded for KEYTURN_REDIS_URL
// whatever the database (a process of its own costs a start and, on PostgreSQL, the migrations).
it('loads neither ioredis without KEYTURN_REDIS_URL nor pg on SQLite when it serves', async (t) => {
  // A process of its own: this one has loaded every driver for the tests.
  const script = `
    import { createRequire } from 'node:module'
    const { serve } = await import(${JSON.stringify(new URL('./main.js', import.meta.url).href)})
    const running = await serve(process.env, { print() {} })
    await fetch(running.url + '/healthz')
    const loaded = Object.keys(createRequire(import.meta.url).cache)
    const has = (name) => loaded.some((path) => path.includes('/node_modules/' + name + '/'))
    console.log(JSON.stringify({ ioredis: has('ioredis'), pg: has('pg') }))
    await running.close()`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...(await sqliteServerEnvironment().fresh(t)), PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const [code] = (await once(child, 'exit')) as [number | null]

  assert.equal(code, 0, stderr)
  assert.deepEqual(JSON.parse(stdout), { ioredis: false, pg: false })
})

it('names the SQLite file by its absolute path in the banner, a relative URL resolved against the working directory', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-relative-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'data', 'keyturn.db')

  const { lines } = await start(t, {
    PORT: '0',
    LOG_LEVEL: 'silent',
    KEYTURN_DATABASE_URL: `sqlite:${relative(process.cwd(), file)}`,
  })

  assert.ok(
    lines.some((line) => line.includes(`Database: SQLite at ${file}`)),
    `the banner names ${file}:\n${lines.join('\n')}`,
  )
})

/** Resolves once the server refuses or turns away new requests: close() has begun. */
async function refusesNewConnections(url: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const answer = await fetch(`${url}/healthz`, { headers: { connection: 'close' } }).then(
      (res) => res.status,
      () => 'refused' as const,
    )
    if (answer === 'refused' || answer === 503) {
      return
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
  assert.fail('the server still accepts new requests after close()')
}
