import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { KyselyUnitOfWork } from '../storage/kysely-unit-of-work.js'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { createLicense } from '../testing/licenses.js'
import { KyselySeatSweepStore } from './kysely-seat-sweep-store.js'
import { SeatSweepService } from './seat-sweep-service.js'

async function counts(test: TestApp) {
  const { rows } = await sql<{ id: string; stored: number | string; rows: number | string }>`
    select id, activation_count as stored,
      (select count(*) from activations where license_id = licenses.id) as rows
    from licenses order by id`.execute(test.connection.db)
  return rows.map((row) => ({ stored: Number(row.stored), rows: Number(row.rows) }))
}

describeEachDatabase('the sweep of lapsed floating seats', (database) => {
  it('removes lapsed activations a bounded batch per tick, keeps live ones, and keeps the stored counts equal to the rows', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const floating = await createLicense(test.app, test.headers, {
      productId,
      maxActivations: 5,
      heartbeatTtl: 60,
    })
    const fixed = await createLicense(test.app, test.headers, { productId, maxActivations: 2 })
    const activate = (key: string, fingerprint: string) =>
      test.app.inject({
        method: 'POST',
        url: '/api/v0/licenses/activate',
        headers: test.headers,
        payload: { key, productId, fingerprint },
      })
    for (const fingerprint of ['a', 'b', 'c', 'd', 'e']) {
      assert.equal((await activate(floating.key, fingerprint)).statusCode, 201)
    }
    for (const fingerprint of ['x', 'y']) {
      assert.equal((await activate(fixed.key, fingerprint)).statusCode, 201)
    }
    test.clock.advance(50_000)
    await activate(floating.key, 'e') // e renews its lease: alive until 00:01:50
    test.clock.advance(20_000) // a–d lapsed at 00:01:00
    const sweep = new SeatSweepService({
      store: new KyselySeatSweepStore(test.connection.db),
      storage: new KyselyUnitOfWork({
        db: test.connection.db,
        clock: test.clock,
        stores: (trx) => ({ sweep: new KyselySeatSweepStore(trx) }),
      }),
      clock: test.clock,
      batchSize: 3,
    })

    const first = await sweep.tick()
    const second = await sweep.tick()
    const third = await sweep.tick()

    assert.equal(first.removed.length, 3)
    assert.equal(first.isBatchFull, true)
    assert.deepEqual(
      [...first.removed, ...second.removed].map((activation) => activation.fingerprint).sort(),
      ['a', 'b', 'c', 'd'],
    )
    assert.equal(second.isBatchFull, false)
    assert.deepEqual(third.removed, [])
    for (const { stored, rows } of await counts(test)) {
      assert.equal(stored, rows)
    }
    const license = await test.app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${floating.id}`,
      headers: test.headers,
    })
    assert.equal(license.json().activationCount, 1)
    const expired = await test.app.inject({
      method: 'GET',
      url: '/api/v0/events?filter=type:eq:activation.expired&limit=100',
      headers: test.headers,
    })
    assert.deepEqual(
      expired
        .json()
        .data.map((event: { data: { fingerprint: string } }) => event.data.fingerprint)
        .sort(),
      ['a', 'b', 'c', 'd'],
      expired.body,
    )
    assert.deepEqual((await counts(test)).map((count) => count.rows).sort(), [1, 2])
  })

  it('leaves an activation alone that renewed its lease after the sweep found it', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, { productId, heartbeatTtl: 60 })
    await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses/activate',
      headers: test.headers,
      payload: { key: license.key, productId, fingerprint: 'a' },
    })
    const store = new KyselySeatSweepStore(test.connection.db)
    test.clock.advance(61_000)
    const found = await store.findLapsed(test.clock.now(), 10)
    await sql`update activations set expires_at = ${'2030-01-01T01:00:00.000Z'}`.execute(test.connection.db)

    const removed = await store.removeLapsed(
      license.id,
      found.map((lapsed) => lapsed.id),
      test.clock.now(),
    )

    assert.equal(found.length, 1)
    assert.deepEqual(removed, [])
    assert.deepEqual(await counts(test), [{ stored: 1, rows: 1 }])
  })
})
