import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { idempotencyLeaseMs } from '../idempotency/idempotency.js'
import { connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'
import { buildTestApp } from '../testing/build-test-app.js'
import type { TestDatabase } from '../testing/each-database.js'

/** A migrated SQLite file of its own, in WAL mode as `keyturn serve` opens it. */
function sqliteFile(t: { after(cleanup: () => void): void }): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-full-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return {
    kind: 'sqlite',
    async open() {
      const connection = connect({ kind: 'sqlite', path: join(dir, 'keyturn.db') })
      await migrateToLatest(connection)
      return connection
    },
  }
}

/**
 * The disk fills under SQLite. `PRAGMA max_page_count` caps the database where it is: SQLite then
 * fails a write that needs one more page with SQLITE_FULL, exactly as on a full disk.
 */
describe('SQLite: the disk fills', () => {
  it('answers writes 503 storage_full, keeps reads, damages nothing, and writes again once there is room', async (t) => {
    const { app, headers, productId, connection, clock } = await buildTestApp(t, sqliteFile(t), {
      recordValidations: true,
    })
    const create = (n: number) =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers: { ...headers, 'idempotency-key': `full-${n}` },
        // Each create needs new pages: ~6 KiB of metadata, its event and its stored answer.
        payload: {
          productId,
          metadata: Object.fromEntries(
            Array.from({ length: 12 }, (_, k) => [`note${k}`, `${n}`.padEnd(480, '.')]),
          ),
        },
      })
    const first = await create(0)
    assert.equal(first.statusCode, 201, first.body)
    const license = first.json() as { id: string; key: string }

    const pages = await sql<{ page_count: number }>`pragma page_count`.execute(connection.db)
    await sql.raw(`pragma max_page_count = ${(pages.rows[0]?.page_count ?? 0) + 20}`).execute(connection.db)

    // A burst shares group commits (storage/sqlite-group-commit.ts): a write that does not fit fails
    // alone or takes its group with it, never half-stored, never a 500.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, n) => create(n + 1)))
    const full = burst.filter((res) => res.statusCode !== 201)
    assert.ok(full.length > 0, 'some writes found no room')
    for (const res of full) {
      assert.equal(res.statusCode, 503, res.body)
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.equal(res.headers['retry-after'], '2')
      assert.equal((res.json() as { code: string }).code, 'storage_full')
    }
    // An update and a revocation are writes too.
    const revoke = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/revoke`,
      headers,
      payload: { reason: 'x'.padEnd(4000, 'x') },
    })
    assert.ok(
      revoke.statusCode === 503 || revoke.statusCode === 200 || revoke.statusCode === 400,
      revoke.body,
    )

    // Reads keep answering; so do validations, which this server records (as it does while a
    // webhook subscribes to them): the record is dropped, never the answer.
    const read = await app.inject({ method: 'GET', url: `/api/v0/licenses/${license.id}`, headers })
    assert.equal(read.statusCode, 200, read.body)
    const validated = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers,
      payload: { key: license.key, productId },
    })
    assert.equal(validated.statusCode, 200, validated.body)
    const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(connection.db)
    assert.deepEqual(integrity.rows, [{ integrity_check: 'ok' }])

    // Room again (the operator freed space): the same requests, retried with their keys, succeed
    // without a restart. A refused one is created now, once. An acknowledged one replays its answer;
    // or, when the disk filled between its commit and storing its answer for replays, says it is in
    // progress until the claim's lease ends, then replays it rebuilt from the event log.
    await sql.raw('pragma max_page_count = 1073741823').execute(connection.db)
    const retried = await Promise.all(Array.from({ length: 20 }, (_, n) => create(n + 1)))
    clock.advance(idempotencyLeaseMs)
    for (const [n, res] of retried.entries()) {
      const before = burst[n]
      if (before?.statusCode !== 201) {
        assert.equal(res.statusCode, 201, res.body)
        continue
      }
      const replay = res.statusCode === 409 ? await create(n + 1) : res
      assert.equal(replay.statusCode, 201, replay.body)
      assert.equal((replay.json() as { id: string }).id, (before.json() as { id: string }).id)
    }
    const list = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses?productId=${productId}&limit=1`,
      headers,
    })
    assert.equal((list.json() as { totalCount: number }).totalCount, 21, 'each license once')
    const events = await sql<{
      n: number
    }>`select count(*) as n from events where type = 'license.created'`.execute(connection.db)
    assert.equal(
      events.rows[0]?.n,
      21,
      'one license.created event for each license, none for a refused write',
    )
  })
})
