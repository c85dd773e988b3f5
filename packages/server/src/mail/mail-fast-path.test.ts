import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { sqliteTestDatabase } from '../testing/each-database.js'
import { call } from '../testing/vendors.js'

// Its own file (its own process): whether events are kept for the mail dispatch is per process,
// and on once an app with mail is built. One engine: the choice is made in JavaScript before the
// insert, the same for both.

async function createdEventDispatched(test: TestApp): Promise<boolean> {
  const customer = await call(test.app, test.headers, 'POST', '/customers', 201, {
    email: `c${Math.random()}@example.com`,
  })
  const license = await call(test.app, test.headers, 'POST', '/licenses', 201, {
    productId: test.productId,
    customerId: customer.id,
  })
  const row = await test.connection.db
    .selectFrom('events')
    .select('dispatched_at')
    .where('type', '=', 'license.created')
    .where('license_id', '=', license.id)
    .executeTakeFirstOrThrow()
  return row.dispatched_at !== null
}

it('stores an event that could mail as dispatched at once while mail is off and no endpoint is enabled, and keeps it for the dispatch once mail is on', async (t) => {
  const withoutMail = await buildTestApp(t, sqliteTestDatabase())
  assert.equal(await createdEventDispatched(withoutMail), true)

  const withMail = await buildTestApp(t, sqliteTestDatabase(), {
    mail: { smtpUrl: 'smtp://127.0.0.1:1', from: 'licensing@acme.example', templatesFolder: undefined },
  })
  assert.equal(await createdEventDispatched(withMail), false)
})
