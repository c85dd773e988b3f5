import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { loadConfig } from '../config.js'
import { connect } from '../storage/connect.js'
import { describeEachServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_two-processes-share-floating-seats-01'

describeEachServerEnvironment(
  'floating seats against two server processes sharing one database',
  (environment) => {
    it('lets exactly 3 of 50 machines hold a floating seat, round after round of lapsed seats reclaimed at once', async (t) => {
      const env = { ...(await environment.fresh(t)), KEYTURN_ADMIN_KEY: adminKey }
      const first = await startServerProcess(t, env)
      const second = await startServerProcess(t, env)
      // The processes run on the system clock: time passes for the leases by moving them into the past.
      const connection = connect(loadConfig(env).database)
      t.after(() => connection.close())
      const headers = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }
      const post = async (base: string, path: string, body: unknown) => {
        const res = await fetch(`${base}/api/v0${path}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
        })
        return { status: res.status, body: (await res.json()) as { id: string; key: string } } // the API's JSON
      }
      const product = await post(first.url, '/products', { name: 'Shared' })
      const productId = product.body.id
      const license = await post(first.url, '/licenses', { productId, maxActivations: 3, heartbeatTtl: 600 })
      assert.equal(license.status, 201, JSON.stringify(license.body))

      for (let round = 0; round < 4; round++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, machine) =>
            post(machine % 2 === 0 ? first.url : second.url, '/licenses/activate', {
              key: license.body.key,
              productId,
              fingerprint: `round-${round}-machine-${machine}`,
            }),
          ),
        )
        const statuses = answers.map((answer) => answer.status)
        assert.equal(
          statuses.filter((status) => status === 201).length,
          3,
          `round ${round}: ${statuses.join(',')}`,
        )
        assert.equal(
          statuses.filter((status) => status === 409).length,
          47,
          `round ${round}: ${statuses.join(',')}`,
        )
        const { rows } = await sql<{ stored: number | string; rows: number | string }>`
        select activation_count as stored,
          (select count(*) from activations where license_id = ${license.body.id}) as rows
        from licenses where id = ${license.body.id}`.execute(connection.db)
        assert.deepEqual(
          rows.map((row) => [Number(row.stored), Number(row.rows)]),
          [[3, 3]],
        )
        // The holders stop heartbeating; their leases end.
        await sql`update activations set expires_at = ${'2000-01-01T00:00:00.000Z'}`.execute(connection.db)
        const seen = await fetch(`${second.url}/api/v0/licenses/${license.body.id}`, { headers })
        assert.equal(((await seen.json()) as { activationCount: number }).activationCount, 0)
      }
    })
  },
)
