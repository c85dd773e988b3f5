import assert from 'node:assert/strict'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { it, type TestContext } from 'node:test'
import { ConfigError, serve } from './main.js'
import { connect, parseDatabaseUrl } from './storage/connect.js'
import { describeEachServerEnvironment } from './testing/server-environments.js'

const otherSecret = 'another-master-secret-of-at-least-32-characters'

async function start(t: TestContext, env: Record<string, string>) {
  const lines: string[] = []
  const server = await serve(env, { print: (line) => lines.push(line) })
  let isClosed = false
  const close = async () => {
    if (!isClosed) {
      isClosed = true
      await server.close()
    }
  }
  t.after(close)
  const adminKey = lines.join('\n').match(/kt_admin_[A-Za-z0-9]+/)?.[0]
  return { server, adminKey, close }
}

async function productsStatus(url: string, key: string | undefined): Promise<number> {
  const res = await fetch(`${url}/api/v0/products`, { headers: { authorization: `Bearer ${key}` } })
  return res.status
}

/** What serve's refusal says; fails the test if it started. */
async function refusal(env: Record<string, string>): Promise<string> {
  let message = ''
  await assert.rejects(serve(env, { print: () => {} }), (error: unknown) => {
    assert.ok(error instanceof ConfigError, String(error))
    message = error.message
    return true
  })
  return message
}

async function withDatabase(
  env: Record<string, string>,
  use: (connection: ReturnType<typeof connect>) => Promise<void>,
) {
  const location = parseDatabaseUrl(env.KEYTURN_DATABASE_URL ?? '')
  assert.ok(location)
  const connection = connect(location)
  try {
    await use(connection)
  } finally {
    await connection.close()
  }
}

describeEachServerEnvironment('the master secret against its database', (environment) => {
  it('stops a start with another secret, naming KEYTURN_SECRET and the fix, and changes nothing', async (t) => {
    const env = await environment.fresh(t)
    const first = await start(t, env)
    await first.close()

    const message = await refusal({ ...env, KEYTURN_SECRET: otherSecret })

    assert.match(message, /KEYTURN_SECRET is not the one this database was created with/)
    assert.match(message, /Set KEYTURN_SECRET to the secret this database was created with/)
    assert.equal(message.includes(otherSecret), false, 'never prints a secret')
    const again = await start(t, env)
    assert.equal(await productsStatus(again.server.url, first.adminKey), 200)
  })

  it('gives a database from before the check value one on its first start, with the secret it runs with', async (t) => {
    const env = await environment.fresh(t)
    const first = await start(t, env)
    await first.close()
    await withDatabase(env, async ({ db }) => {
      await db.deleteFrom('secret_check').execute()
    })

    const second = await start(t, env)
    assert.equal(await productsStatus(second.server.url, first.adminKey), 200)
    await second.close()

    await withDatabase(env, async ({ db }) => {
      const rows = await db.selectFrom('secret_check').select(['id', 'value']).execute()
      assert.equal(rows.length, 1)
      assert.match(rows[0]?.value ?? '', /^[0-9a-f]{64}$/, 'an HMAC, not the secret')
    })
    assert.match(await refusal({ ...env, KEYTURN_SECRET: otherSecret }), /KEYTURN_SECRET is not the one/)
  })

  if (environment.kind !== 'sqlite') {
    return
  }

  it('generates no new keyturn.secret for a database that holds API keys (restored without it), and says where it goes', async (t) => {
    const env = await environment.fresh(t)
    const secretFile = join(
      dirname((env.KEYTURN_DATABASE_URL ?? '').slice('sqlite:'.length)),
      'keyturn.secret',
    )
    const first = await start(t, env)
    await first.close()
    rmSync(secretFile)

    const missing = await refusal(env)
    writeFileSync(secretFile, `${otherSecret}\n`, { mode: 0o600 })
    const other = await refusal(env)

    assert.match(missing, /holds API keys, but its master secret file .+keyturn\.secret is missing/)
    assert.match(
      missing,
      /Put the keyturn\.secret that belongs to this database at .+, or set KEYTURN_SECRET/,
    )
    assert.match(
      other,
      /The master secret in .+keyturn\.secret is not the one this database was created with/,
    )
    rmSync(secretFile)
    assert.equal(existsSync(secretFile), false)
    await refusal(env)
    assert.equal(existsSync(secretFile), false, 'the refused start wrote no secret')
  })
})
