import assert from 'node:assert/strict'
import { it } from 'node:test'
import { sql } from 'kysely'
import { describeEachDatabase } from '../testing/each-database.js'
import { migrateToLatest } from './migrate.js'

describeEachDatabase('migrations', (database) => {
  it('applies a migration that sorts before migrations already applied when a database missed it', async (t) => {
    const connection = await database.open()
    t.after(() => connection.close())
    const db = connection.db
    // A development database that ran 50–70 before 41 (webhooks) landed: 41's tables and record are missing.
    await db.schema.dropTable('webhook_deliveries').execute()
    await db.schema.dropTable('webhook_endpoints').execute()
    await sql`delete from kysely_migration where name = '2026-11-23-41-webhooks'`.execute(db)

    const applied = await migrateToLatest(connection)

    assert.deepEqual(applied, ['2026-11-23-41-webhooks'])
    const { rows } = await sql<{ n: number }>`select count(*) as n from webhook_endpoints`.execute(db)
    assert.equal(Number(rows[0]?.n), 0)
    assert.deepEqual(await migrateToLatest(connection), [], 'nothing pending afterwards')
  })
})
