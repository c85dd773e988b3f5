import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { loadConfig } from '../config.js'
import { connect } from '../storage/connect.js'
import { adminPoster, assertThreeOfFiftyActivate } from '../testing/seat-contention.js'
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
      const headers = { authorization: `Bearer ${adminKey}` }
      const post = adminPoster(adminKey)
      const product = await post(first.url, '/products', { name: 'Shared' })
      const productId = product.body.id
      const license = await post(first.url, '/licenses', { productId, maxActivations: 3, heartbeatTtl: 600 })
      assert.equal(license.status, 201, JSON.stringify(license.body))

      for (let round = 0; round < 4; round++) {
        await assertThreeOfFiftyActivate(post, [first.url, second.url], license.body, productId, round)
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
