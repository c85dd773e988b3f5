import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { dropSchema, processDatabaseUrl, query } from '../testing/postgres-database.js'
import { connect } from './connect.js'
import { writeTransaction } from './write-transaction.js'

const serverUrl = process.env.TEST_POSTGRES_URL
const skip = serverUrl ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')

/** A schema of its own with a `notes` table, and one connection to it (so one session). */
async function oneSession(t: TestContext, preparedStatements?: boolean) {
  const url = await processDatabaseUrl(serverUrl ?? '')
  const schema = `t_${randomBytes(6).toString('hex')}`
  await query(url, `create schema ${schema}; create table ${schema}.notes (name text)`)
  const connection = connect(
    { kind: 'postgres', url, ...(preparedStatements === undefined ? {} : { preparedStatements }) },
    { searchPath: schema, poolSize: 1 },
  )
  t.after(async () => {
    await connection.close()
    await dropSchema(url, schema)
  })
  const { db } = connection
  const readNotes = () => sql<Record<string, unknown>>`select * from notes`.execute(db).then((r) => r.rows)
  const prepared = async () =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map(
      (row) => row.statement,
    )
  /** What a newer Keyturn process's migration does while this one runs. */
  const migrateElsewhere = (change: string) => query(url, `alter table ${schema}.notes ${change}`)
  return { db, readNotes, prepared, migrateElsewhere }
}

describe('PostgreSQL named statements', { skip }, () => {
  it('prepares each statement once on the connection that runs it', async (t) => {
    const { readNotes, prepared } = await oneSession(t)

    await readNotes()
    await readNotes()

    assert.deepEqual(
      (await prepared()).filter((statement) => statement === 'select * from notes'),
      ['select * from notes'],
    )
  })

  it('answers from the new shape when a migration changed a table under a prepared select *', async (t) => {
    const { db, readNotes, migrateElsewhere } = await oneSession(t)
    await sql`insert into notes (name) values ('a')`.execute(db)
    const readInTransaction = () =>
      writeTransaction(db, (trx) =>
        sql`select * from notes where name = 'a'`.execute(trx).then((r) => r.rows),
      )
    await readNotes()
    await readInTransaction()

    await migrateElsewhere(`add column color text default 'red'`)

    assert.deepEqual(await readNotes(), [{ name: 'a', color: 'red' }])
    // There PostgreSQL's refusal aborted the transaction: it runs again, unprepared.
    assert.deepEqual(await readInTransaction(), [{ name: 'a', color: 'red' }])
  })

  it('prepares nothing when KEYTURN_POSTGRES_PREPARED_STATEMENTS is false', async (t) => {
    const { readNotes, prepared } = await oneSession(t, false)

    await readNotes()

    assert.deepEqual(await prepared(), [])
  })
})
