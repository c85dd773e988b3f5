import assert from 'node:assert/strict'
import { it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { parseListQuery } from '../core/list-query.js'
import { KyselyLicenseStore } from '../licenses/kysely-license-store.js'
import { licenseListSpec } from '../licenses/license-store.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { migrateToLatest } from './migrate.js'
import { licenseMetadata } from './migrations/2026-11-27-00-license-metadata.js'

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

  it('gives stored events the license they are about when migration 81 adds events.license_id', async (t) => {
    const connection = await database.open()
    t.after(() => connection.close())
    const db = connection.db
    await db.schema.dropIndex('events_license_id_occurred_at').execute()
    await db.schema.alterTable('events').dropColumn('license_id').execute()
    await sql`delete from kysely_migration where name = '2026-11-23-81-event-license-id'`.execute(db)
    const stored = [
      ['evt_1', 'license.revoked', { id: 'lic_a', object: 'License' }],
      ['evt_2', 'activation.created', { id: 'act_b', licenseId: 'lic_a' }],
      ['evt_3', 'license.validation_failed', { isValid: false, license: { id: 'lic_c' } }],
      ['evt_4', 'license.validation_failed', { isValid: false, license: null }],
      ['evt_5', 'customer.created', { id: 'cus_d' }],
    ] as const
    for (const [id, type, data] of stored) {
      await sql`insert into events (id, type, occurred_at, data) values (${id}, ${type}, ${'2030-01-01T00:00:00.000Z'}, ${JSON.stringify(data)})`.execute(
        db,
      )
    }

    assert.deepEqual(await migrateToLatest(connection), ['2026-11-23-81-event-license-id'])
    const { rows } = await sql<{ id: string; license_id: string | null }>`
      select id, license_id from events where id in (${sql.join(stored.map(([id]) => id))}) order by id`.execute(
      db,
    )
    assert.deepEqual(
      rows.map((row) => [row.id, row.license_id]),
      [
        ['evt_1', 'lic_a'],
        ['evt_2', 'lic_a'],
        ['evt_3', 'lic_c'],
        ['evt_4', null],
        ['evt_5', null],
      ],
    )
  })

  it("turns stored events' actors into { type, id } when migration 2026-11-30-05 runs", async (t) => {
    const connection = await database.open()
    t.after(() => connection.close())
    const db = connection.db
    await db.schema.alterTable('events').dropColumn('actor_type').execute()
    await db.schema.alterTable('events').renameColumn('actor_id', 'actor_api_key_id').execute()
    await sql`delete from kysely_migration where name = '2026-11-30-05-event-actors'`.execute(db)
    const stored = [
      ['evt_1', 'license.revoked', 'key_a', 'admin'],
      ['evt_2', 'license.file_issued', 'cus_b', 'customer'],
      ['evt_3', 'webhook_endpoint.disabled', null, null],
      ['evt_4', 'license.expiring_soon', null, null],
      ['evt_5', 'activation.expired', null, null],
      ['evt_6', 'portal.sign_in_requested', null, null],
      ['evt_7', 'activation.created', 'key_c', 'client'],
    ] as const
    for (const [id, type, actor, role] of stored) {
      await sql`insert into events (id, type, occurred_at, actor_api_key_id, actor_role, data)
        values (${id}, ${type}, ${'2030-01-01T00:00:00.000Z'}, ${actor}, ${role}, ${'{}'})`.execute(db)
    }

    assert.deepEqual(await migrateToLatest(connection), ['2026-11-30-05-event-actors'])
    const { rows } = await sql<{
      id: string
      actor_type: string
      actor_id: string
      actor_role: string | null
    }>`
      select id, actor_type, actor_id, actor_role from events
      where id in (${sql.join(stored.map(([id]) => id))}) order by id`.execute(db)
    assert.deepEqual(
      rows.map((row) => [row.id, row.actor_type, row.actor_id, row.actor_role]),
      [
        ['evt_1', 'apiKey', 'key_a', 'admin'],
        ['evt_2', 'customer', 'cus_b', null],
        ['evt_3', 'system', 'webhook-deliveries', null],
        ['evt_4', 'system', 'expiry-notices', null],
        ['evt_5', 'system', 'seat-sweep', null],
        ['evt_6', 'system', 'portal', null],
        ['evt_7', 'apiKey', 'key_c', 'client'],
      ],
    )
  })

  it('widens durations past 32 bits when migration 31 runs on a database whose migration 50 made them integer', async (t) => {
    const connection = await database.open()
    t.after(() => connection.close())
    const db = connection.db
    if (connection.kind === 'postgres') {
      // As migration 50 made them before: PostgreSQL's 32-bit integer.
      await sql`alter table policies alter column duration type integer`.execute(db)
      await sql`alter table licenses alter column first_activation_duration type integer`.execute(db)
    }
    await sql`delete from kysely_migration where name = '2026-11-23-31-durations-bigint'`.execute(db)

    assert.deepEqual(await migrateToLatest(connection), ['2026-11-23-31-durations-bigint'])
    await sql`insert into products (id, name, created_at, updated_at) values ('prd_d', 'D', ${'2030-01-01T00:00:00.000Z'}, ${'2030-01-01T00:00:00.000Z'})`.execute(
      db,
    )
    await sql`insert into policies (id, product_id, name, duration, expiration_basis, created_at, updated_at) values ('pol_d', 'prd_d', 'P', ${3_000_000_000}, 'creation', ${'2030-01-01T00:00:00.000Z'}, ${'2030-01-01T00:00:00.000Z'})`.execute(
      db,
    )
    const { rows } = await sql<{
      duration: string | number
    }>`select duration from policies where id = 'pol_d'`.execute(db)
    assert.equal(Number(rows[0]?.duration), 3_000_000_000)
  })

  it('finds licenses stored before migration 2026-11-27-00 by their metadata once it has run (and its index)', async (t) => {
    const connection = await database.open()
    t.after(() => connection.close())
    const db = connection.db
    const at = '2030-01-01T00:00:00.000Z'
    await licenseMetadata(connection.kind).down(db as unknown as Kysely<unknown>) // SQLite: its table and triggers go
    await sql`delete from kysely_migration where name = '2026-11-27-00-license-metadata'`.execute(db)
    await sql`insert into products (id, name, created_at, updated_at) values ('prd_m', 'M', ${at}, ${at})`.execute(
      db,
    )
    await sql`insert into licenses (id, product_id, key, max_activations, created_at, updated_at, metadata)
      values ('lic_m', 'prd_m', 'KEY-M', 1, ${at}, ${at}, ${'{"order":"ord_7","seats":2,"trial":true,"note":null}'})`.execute(
      db,
    )

    assert.deepEqual(await migrateToLatest(connection), ['2026-11-27-00-license-metadata'])
    const store = new KyselyLicenseStore(db)
    const found = async (filter: string) => {
      const request = parseListQuery({ filter }, licenseListSpec)
      const slice = await store.list({ request, productId: undefined, now: new Date(at) })
      return slice.items.map((license) => license.id)
    }
    for (const filter of ['metadata.order:eq:ord_7', 'metadata.seats:eq:2', 'metadata.trial:eq:true']) {
      assert.deepEqual(await found(filter), ['lic_m'], filter)
    }
    assert.deepEqual(await found('metadata.note:eq:null'), [])
    if (connection.kind === 'postgres') {
      // The GIN index keeps no pending list for lookups to read through.
      const { rows } = await sql<{ options: string[] | null }>`
        select reloptions as options from pg_class
        where oid = to_regclass('licenses_metadata')`.execute(db)
      assert.deepEqual(rows[0]?.options, ['fastupdate=off'])
    }
  })
})
