import assert from 'node:assert/strict'
import { it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import type { Database } from '../storage/database.js'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'

/** A reference of the request (customer, policy, entitlement) gone between the checks and the write. */
describeEachDatabase('a license write whose reference went meanwhile', (database) => {
  it('answers 404, creating nothing, when an entitlement is deleted between the checks and the write', async (t) => {
    const { app, headers, productId, connection } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/entitlements',
      headers,
      payload: { productId, code: 'export', name: 'Export' },
    })
    assert.equal(created.statusCode, 201, created.body)
    const create = () =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers,
        payload: { productId, entitlements: ['export'] },
      })

    if (connection.kind === 'sqlite') {
      // The race, made certain: the entitlement goes as the license row goes in (in the same
      // transaction, so it is back after the rollback: the answer cannot name it, and says what may
      // have gone).
      await sql`create trigger vanish before insert on licenses begin delete from entitlements where code = 'export'; end`.execute(
        connection.db,
      )
      const res = await create()
      assert.equal(res.statusCode, 404, res.body)
      assert.equal(res.json().code, 'customer_not_found')
      assert.match(
        res.json().detail,
        /customer, policy or entitlement named in the request was deleted meanwhile/,
      )
    } else {
      // A license is created by one statement on PostgreSQL (UnitOfWork.writeOne). The race, made
      // certain: its insert waits behind a lock on the table, taken by a transaction that deletes
      // the entitlement meanwhile, after the request's checks read it. The answer names it.
      const { answer } = await connection.db.transaction().execute(async (trx) => {
        await sql`lock table licenses in share row exclusive mode`.execute(trx)
        const answer = create().then((res) => res) // inject sends once it is awaited
        await waitForInsertWaitingOnLock(connection.db)
        await trx.deleteFrom('entitlements').where('code', '=', 'export').execute()
        return { answer } // not awaited here: the insert waits for this transaction's commit
      })
      const res = await answer
      assert.equal(res.statusCode, 400, res.body)
      assert.match(res.json().detail, /has no entitlement with the code export/)
    }

    const licenses = await connection.db.selectFrom('licenses').select('id').execute()
    assert.deepEqual(licenses, [])
  })

  // PostgreSQL only: a product suspended between the request's reads and its insert needs another
  // process's write there, and on SQLite nothing can wait for it deterministically in this process
  // (a trigger runs after the insert's values, its product check included, are computed).
  if (database.kind === 'postgres') {
    it('answers 409, creating nothing, when the product is suspended between the checks and the write', async (t) => {
      const { app, headers, productId, connection } = await buildTestApp(t, database)
      // A policy: the request reads it (and the product) before its insert, the long way.
      const policy = await app.inject({
        method: 'POST',
        url: '/api/v0/policies',
        headers,
        payload: { productId, name: 'Standard' },
      })
      assert.equal(policy.statusCode, 201, policy.body)
      const { answer } = await connection.db.transaction().execute(async (trx) => {
        await sql`lock table licenses in share row exclusive mode`.execute(trx)
        const answer = app
          .inject({
            method: 'POST',
            url: '/api/v0/licenses',
            headers,
            payload: { productId, policyId: policy.json().id },
          })
          .then((res) => res) // inject sends once it is awaited
        await waitForInsertWaitingOnLock(connection.db)
        await trx.updateTable('products').set({ suspended_at: new Date().toISOString() }).execute()
        return { answer } // the insert waits for this transaction's commit
      })
      const res = await answer
      assert.equal(res.statusCode, 409, res.body)
      assert.equal(res.json().code, 'product_suspended')
      const licenses = await connection.db.selectFrom('licenses').select('id').execute()
      assert.deepEqual(licenses, [])
    })
  }
})

/** Until a license insert waits for a lock (the `lock table` above); polled, not timed. */
async function waitForInsertWaitingOnLock(db: Kysely<Database>): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pg_stat_activity
      where wait_event_type = 'Lock' and query like '%insert into "licenses"%'`.execute(db)
    if ((rows[0]?.waiting ?? 0) > 0) {
      return
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
}
