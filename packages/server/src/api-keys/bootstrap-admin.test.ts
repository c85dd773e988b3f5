import assert from 'node:assert/strict'
import { it, type TestContext } from 'node:test'
import { buildApp } from '../app.js'
import { deriveSecretKeys } from '../core/secrets.js'
import { describeEachDatabase, type TestDatabase } from '../testing/each-database.js'
import { FixedClock } from '../testing/fixed-clock.js'

/**
 * Four apps on one database, standing for four processes making their first start together, and
 * the connection they share.
 */
async function fourProcesses(t: TestContext, database: TestDatabase) {
  const connection = await database.open()
  t.after(() => connection.close())
  const apps = Array.from({ length: 4 }, () =>
    buildApp({
      db: connection.db,
      clock: new FixedClock(),
      secretKeys: deriveSecretKeys('test-master-secret-with-at-least-32-characters'),
      logger: false,
    }),
  )
  t.after(() => Promise.all(apps.map(({ app }) => app.close())))
  return { connection, apps }
}

describeEachDatabase('first admin key at start-up', (database) => {
  it('creates and reveals exactly one admin key when several processes start at once', async (t) => {
    const { connection, apps } = await fourProcesses(t, database)

    const results = await Promise.all(apps.map(({ services }) => services.apiKeys.bootstrapAdmin(undefined)))

    const revealed = results.map((result) => result.createdSecret).filter((secret) => secret !== undefined)
    assert.equal(revealed.length, 1, JSON.stringify(results))
    const rows = await connection.db.selectFrom('api_keys').select('id').where('role', '=', 'admin').execute()
    assert.equal(rows.length, 1)
  })

  it('keeps one key row for KEYTURN_ADMIN_KEY however many processes start with it at once', async (t) => {
    const { connection, apps } = await fourProcesses(t, database)
    const secret = 'kt_admin_configured-by-the-operator-000000001'

    await Promise.all(apps.map(({ services }) => services.apiKeys.bootstrapAdmin(secret)))

    const rows = await connection.db.selectFrom('api_keys').select('id').execute()
    assert.equal(rows.length, 1)
    assert.notEqual(await apps[0]?.services.apiKeys.authenticate(secret), undefined)
  })
})
