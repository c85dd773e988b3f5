import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from './build-test-app.js'
import { describeEachDatabase } from './each-database.js'
import { tableDigests } from './table-digests.js'

// The hostile-request and crash tests trust these digests to see any change a request makes.
describeEachDatabase('tableDigests', (database) => {
  it('stays the same while nothing changes, and moves for exactly the table a row was added to or changed in', async (t) => {
    const test = await buildTestApp(t, database)
    const before = await tableDigests(test.connection)
    assert.ok('licenses' in before && 'products' in before, Object.keys(before).join(', '))
    assert.ok(!('kysely_migration' in before), 'the bookkeeping tables are left out')
    assert.deepEqual(await tableDigests(test.connection), before)

    const created = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: test.headers,
      payload: { productId: test.productId },
    })
    assert.equal(created.statusCode, 201, created.body)
    const added = await tableDigests(test.connection)
    assert.notEqual(added.licenses, before.licenses)
    assert.equal(added.products, before.products)

    await test.connection.db.updateTable('products').set({ name: 'Renamed' }).execute()
    const changed = await tableDigests(test.connection)
    assert.notEqual(changed.products, added.products)
    assert.equal(changed.licenses, added.licenses)
  })
})
