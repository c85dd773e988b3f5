import assert from 'node:assert/strict'
import { it } from 'node:test'
import { connect, parseDatabaseUrl } from '../storage/connect.js'
import { sqliteServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_stats-across-restart-00000000001'

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v0${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`)
  return JSON.parse(text)
}

it('stores the counts of a `keyturn serve` stopped by SIGTERM before its next flush', async (t) => {
  const fresh = await sqliteServerEnvironment().fresh(t)
  const env = { ...fresh, KEYTURN_ADMIN_KEY: adminKey }
  const first = await startServerProcess(t, env)
  const product = await call(first.url, 'POST', '/products', { name: 'Counted' })
  const license = await call(first.url, 'POST', '/licenses', { productId: product.id })
  await call(first.url, 'POST', '/licenses/validate', { key: license.key, productId: product.id })
  const exited = new Promise((resolve) => first.child.once('exit', resolve))
  first.child.kill('SIGTERM')
  assert.equal(await exited, 0)

  // What the stopped process left in its database, read directly.
  const location = parseDatabaseUrl(fresh.KEYTURN_DATABASE_URL ?? '')
  assert.ok(location !== undefined)
  const connection = connect(location)
  t.after(() => connection.close())
  const rows = await connection.db
    .selectFrom('daily_stats')
    .select(['product_id', 'licenses_created', 'validations_valid'])
    .execute()
  assert.deepEqual(
    rows.map((row) => [row.product_id, Number(row.licenses_created), Number(row.validations_valid)]),
    [[product.id, 1, 1]],
  )
})
