import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { sql } from 'kysely'
import { processDatabaseUrl } from '../testing/postgres-database.js'
import { connect } from './connect.js'
import { databaseFaultOf } from './database-faults.js'

const url = process.env.TEST_POSTGRES_URL
const skip = url ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')

describe('a statement that runs past KEYTURN_DATABASE_TIMEOUT_MS [postgres]', { skip }, () => {
  it('is cancelled by the server as database_unavailable; the database is not taken for down', async () => {
    const connection = connect(
      { kind: 'postgres', url: await processDatabaseUrl(url ?? '') },
      { timeoutMs: 200 },
    )
    try {
      const slow = await sql`select pg_sleep(2)`.execute(connection.db).then(
        () => undefined,
        (error: unknown) => error,
      )
      assert.equal((slow as { code?: string }).code, '57014')
      assert.equal(databaseFaultOf(slow), 'database_unavailable')
      // No outage: nothing logged, no fail-fast, the next statements run on the pool as before.
      assert.equal(connection.reachability.reachable, true)
      assert.equal(connection.reachability.errors, 0)
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => sql<{ one: number }>`select 1 as one`.execute(connection.db)),
      )
      assert.deepEqual(
        answers.map((answer) => answer.rows[0]?.one),
        [1, 1, 1, 1, 1],
      )
    } finally {
      await connection.close()
    }
  })
})
