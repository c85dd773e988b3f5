import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { CustomerId, EntitlementId, ProductId } from '@keyturn/protocol'
import { sql } from 'kysely'
import { KyselyEventStore } from '../events/kysely-event-store.js'
import { KyselyLicenseStore } from '../licenses/kysely-license-store.js'
import { buildTestApp, createProduct, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { aLicense } from '../testing/licenses.js'
import { call } from '../testing/vendors.js'
import { KyselyUnitOfWork } from './kysely-unit-of-work.js'
import { writeTransaction } from './write-transaction.js'

async function counts(test: TestApp) {
  const count = async (table: 'licenses' | 'events') =>
    Number(
      (
        await test.connection.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    )
  return { licenses: await count('licenses'), events: await count('events') }
}

function eventOfRequest(test: TestApp, requestId: string) {
  return test.connection.db
    .selectFrom('events')
    .selectAll()
    .where('request_id', '=', requestId)
    .executeTakeFirstOrThrow()
}

/** A unit of work whose stores are a license store (on the transaction, or for writeOne the pool). */
const licenseUnitOfWork = (test: TestApp) =>
  new KyselyUnitOfWork({
    db: test.connection.db,
    clock: test.clock,
    stores: (db) => ({ licenses: new KyselyLicenseStore(db) }),
  })

describeEachDatabase('KyselyUnitOfWork: a change and its event commit together', (database) => {
  const unitOfWork = licenseUnitOfWork

  it('writes the change and its event, with actor and request id, when the work succeeds', async (t) => {
    const test = await buildTestApp(t, database)
    const before = await counts(test)
    const license = aLicense({ productId: test.productId })

    await unitOfWork(test).write({ ...test.admin, requestId: 'req_test' }, async ({ licenses, events }) => {
      await licenses.insert(license, [], [])
      events.record('license.created', license.productId, { id: license.id })
    })

    assert.deepEqual(await counts(test), { licenses: before.licenses + 1, events: before.events + 1 })
    const event = await eventOfRequest(test, 'req_test')
    assert.equal(event.type, 'license.created')
    assert.deepEqual(
      [event.actor_type, event.actor_id, event.actor_role],
      ['apiKey', test.admin.apiKeyId, 'admin'],
    )
  })

  it('leaves neither the change nor its event when a failure is injected after the change, before commit', async (t) => {
    const test = await buildTestApp(t, database)
    const before = await counts(test)

    await assert.rejects(
      unitOfWork(test).write(test.admin, async ({ licenses, events }) => {
        const license = aLicense({ productId: test.productId })
        await licenses.insert(license, [], [])
        events.record('license.created', license.productId, { id: license.id })
        throw new Error('injected')
      }),
      /injected/,
    )

    assert.deepEqual(await counts(test), before)
  })

  it('leaves no change when writing its event fails', async (t) => {
    const test = await buildTestApp(t, database)
    const before = await counts(test)

    await assert.rejects(
      unitOfWork(test).write(test.admin, async ({ licenses, events }) => {
        const license = aLicense({ productId: test.productId })
        await licenses.insert(license, [], [])
        events.record('license.created', license.productId, { cannot: { be: 10n } }) // JSON cannot hold a BigInt
      }),
      /BigInt/,
    )

    assert.deepEqual(await counts(test), before)
  })
})

describeEachDatabase('KyselyUnitOfWork.writeOne: a one-statement change and its events', (database) => {
  const unitOfWork = licenseUnitOfWork

  it('writes the license, its entitlement link and its event together', async (t) => {
    const test = await buildTestApp(t, database)
    const entitlement: { id: EntitlementId } = await call(
      test.app,
      test.headers,
      'POST',
      '/entitlements',
      201,
      {
        productId: test.productId,
        code: 'export-pdf',
        name: 'Export to PDF',
      },
    )
    const before = await counts(test)
    const license = aLicense({ productId: test.productId })

    const inserted = await unitOfWork(test).writeOne(
      { ...test.admin, requestId: 'req_one' },
      async ({ licenses, events }) => {
        events.record('license.created', license.productId, { id: license.id })
        return licenses.insert(license, [entitlement.id], events.take())
      },
    )

    assert.equal(inserted, 'ok')
    assert.deepEqual(await counts(test), { licenses: before.licenses + 1, events: before.events + 1 })
    const event = await eventOfRequest(test, 'req_one')
    assert.deepEqual([event.type, event.actor_id], ['license.created', test.admin.apiKeyId])
    const links = await test.connection.db
      .selectFrom('license_entitlements')
      .select('entitlement_id')
      .where('license_id', '=', license.id)
      .execute()
    assert.deepEqual(links, [{ entitlement_id: entitlement.id }])
  })

  it('writes neither the license nor its event when a foreign key refuses the license', async (t) => {
    const test = await buildTestApp(t, database)
    const before = await counts(test)
    const license = aLicense({ productId: test.productId, customerId: 'cus_gone' as CustomerId })

    const inserted = await unitOfWork(test).writeOne(test.admin, async ({ licenses, events }) => {
      events.record('license.created', license.productId, { id: license.id })
      return licenses.insert(license, [], events.take())
    })

    assert.equal(inserted, 'reference_gone')
    assert.deepEqual(await counts(test), before)
  })
})

describeEachDatabase('KyselyUnitOfWork: events that go with no change (group commit)', (database) => {
  const unitOfWork = (test: TestApp) =>
    new KyselyUnitOfWork({ db: test.connection.db, clock: test.clock, stores: () => ({}) })

  it('commits each event before resolving, concurrent ones sharing transactions', async (t) => {
    const test = await buildTestApp(t, database)
    const storage = unitOfWork(test)
    const before = await counts(test)

    await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        storage.recordAlone(
          { ...test.admin, requestId: `req_${n}` },
          'license.token_issued',
          test.productId,
          {
            n,
          },
        ),
      ),
    )

    assert.equal((await counts(test)).events, before.events + 20)
    const rows = await test.connection.db
      .selectFrom('events')
      .select(['request_id', 'actor_id'])
      .where('type', '=', 'license.token_issued')
      .execute()
    assert.deepEqual(
      rows.map((row) => row.request_id).sort(),
      Array.from({ length: 20 }, (_, n) => `req_${n}`).sort(),
    )
    assert.ok(rows.every((row) => row.actor_id === test.admin.apiKeyId))
    // Every field as it was recorded (PostgreSQL writes the group from arrays, one per column).
    const [stored] = await new KyselyEventStore(test.connection.db).findByRequestId('req_7')
    assert.deepEqual(stored && { ...stored, id: undefined }, {
      id: undefined,
      type: 'license.token_issued',
      occurredAt: test.clock.now(),
      productId: test.productId,
      actor: { type: 'apiKey', id: test.admin.apiKeyId, role: 'admin' },
      requestId: 'req_7',
      data: { n: 7 },
    })
    if (database.kind === 'postgres') {
      const { rows: transactions } = await sql<{ n: string }>`
        select count(distinct xmin::text) as n from events where type = 'license.token_issued'`.execute(
        test.connection.db,
      )
      assert.ok(Number(transactions[0]?.n) <= 2, `${transactions[0]?.n} transactions for 20 events`)
    }
  })

  it('fails only the event that cannot be written when it shares a transaction', async (t) => {
    const test = await buildTestApp(t, database)
    const storage = unitOfWork(test)
    const before = await counts(test)

    const outcomes = await Promise.allSettled(
      [{ a: 1 }, { a: 2 }, { cannot: 10n }, { a: 3 }].map((data) =>
        storage.recordAlone(test.admin, 'license.token_issued', test.productId, data),
      ),
    )

    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    )
    assert.equal((await counts(test)).events, before.events + 3)
  })

  it('runs again a transaction PostgreSQL aborts to break a deadlock, so both writers succeed', async (t) => {
    const test = await buildTestApp(t, database)
    // SQLite's write transactions take the database's lock first: they never interleave, so there
    // both simply run in turn.
    const interleaves = test.connection.kind === 'postgres'
    const other = await createProduct(test.app, test.headers)
    const runs = { a: 0, b: 0 }
    // Both first runs lock their first row before either asks for its second: a certain deadlock.
    let arrived = 0
    let bothLocked: () => void = () => {}
    const locked = new Promise<void>((resolve) => {
      bothLocked = resolve
    })
    const lockBoth = (name: 'a' | 'b', first: ProductId, second: ProductId) =>
      writeTransaction(test.connection.db, async (trx) => {
        runs[name]++
        const touch = (id: ProductId) =>
          trx.updateTable('products').set({ name: sql`name` }).where('id', '=', id).execute()
        await touch(first)
        if (interleaves && runs[name] === 1) {
          arrived++
          if (arrived === 2) {
            bothLocked()
          }
          await locked
        }
        await touch(second)
        return name
      })

    const done = await Promise.all([
      lockBoth('a', test.productId, other),
      lockBoth('b', other, test.productId),
    ])

    assert.deepEqual(done, ['a', 'b'])
    assert.equal(runs.a + runs.b, interleaves ? 3 : 2, 'the deadlock victim ran once more')
  })
})
