import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
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
    // The race, made certain: the entitlement goes as the license row goes in (in the same
    // transaction, so it is back after the rollback: the answer cannot name it, and says what may have gone).
    if (connection.kind === 'sqlite') {
      await sql`create trigger vanish before insert on licenses begin delete from entitlements where code = 'export'; end`.execute(
        connection.db,
      )
    } else {
      await sql`create function vanish() returns trigger language plpgsql as $$ begin delete from entitlements where code = 'export'; return new; end $$`.execute(
        connection.db,
      )
      await sql`create trigger vanish before insert on licenses for each row execute function vanish()`.execute(
        connection.db,
      )
    }

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId, entitlements: ['export'] },
    })

    assert.equal(res.statusCode, 404, res.body)
    assert.equal(res.json().code, 'customer_not_found')
    assert.match(
      res.json().detail,
      /customer, policy or entitlement named in the request was deleted meanwhile/,
    )
    const licenses = await connection.db.selectFrom('licenses').select('id').execute()
    assert.deepEqual(licenses, [])
  })
})
