import assert from 'node:assert/strict'
import { it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { migrateToLatest } from '../storage/migrate.js'
import { offlineActivation } from '../storage/migrations/2026-11-30-10-offline-activation.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { KyselyOfflineStore } from './kysely-offline-store.js'
import { licenseKeyHint } from './offline-formats.js'

describeEachDatabase('migration 2026-11-30-10 (offline activation)', (database) => {
  it('gives licenses stored before it the key hint request files name them by', async (t) => {
    const connection = await database.open()
    t.after(() => connection.close())
    const db = connection.db
    const at = '2030-01-01T00:00:00.000Z'
    await offlineActivation(connection.kind).down(db as unknown as Kysely<unknown>)
    await sql`delete from kysely_migration where name = '2026-11-30-10-offline-activation'`.execute(db)
    await sql`insert into products (id, name, created_at, updated_at) values ('prd_o', 'O', ${at}, ${at})`.execute(
      db,
    )
    const keys = ['7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A', 'Acme-Pro-2024-000183']
    for (const [n, key] of keys.entries()) {
      await sql`insert into licenses (id, product_id, key, max_activations, created_at, updated_at)
        values (${`lic_o${n}`}, 'prd_o', ${key}, 1, ${at}, ${at})`.execute(db)
    }

    assert.deepEqual(await migrateToLatest(connection), ['2026-11-30-10-offline-activation'])
    const store = new KyselyOfflineStore(db)
    for (const [n, key] of keys.entries()) {
      assert.deepEqual(await store.licensesByKeyHint('prd_o', licenseKeyHint(key)), [`lic_o${n}`], key)
    }
    assert.deepEqual(await store.licensesByKeyHint('prd_other', licenseKeyHint(keys[0] ?? '')), [])
  })
})
