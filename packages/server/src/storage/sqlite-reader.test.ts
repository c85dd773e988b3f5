import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { connect } from './connect.js'
import { sqliteReaderOf } from './sqlite-reader.js'
import { writeTransaction } from './write-transaction.js'

function openFile(t: TestContext) {
  const folder = mkdtempSync(join(tmpdir(), 'keyturn-sqlite-reader-'))
  const connection = connect({ kind: 'sqlite', path: join(folder, 'keyturn.db') })
  t.after(async () => {
    await connection.close()
    rmSync(folder, { recursive: true, force: true })
  })
  return connection.db
}

describe('SQLite reader (validation reads without Kysely)', () => {
  it('reads only committed rows: a write transaction in progress on the server connection is not seen', async (t) => {
    const db = openFile(t)
    await sql`create table notes (name text primary key)`.execute(db)
    const reader = sqliteReaderOf(db)
    assert.ok(reader !== undefined, 'a file database has a reader')
    const find = (name: string) =>
      reader.get<{ name: string }>('select name from notes where name = ?', [name])

    await writeTransaction(db, async (trx) => {
      await sql`insert into notes (name) values ('a')`.execute(trx)
      // Written on the server's connection, not committed yet.
      assert.equal(find('a'), undefined)
    })

    assert.deepEqual(find('a'), { name: 'a' })
  })

  it('refuses to write', async (t) => {
    const db = openFile(t)
    await sql`create table notes (name text primary key)`.execute(db)
    const reader = sqliteReaderOf(db)
    assert.throws(
      () => reader?.get("insert into notes (name) values ('b') returning name", []),
      /readonly|query_only|attempt to write/i,
    )
  })

  it('is absent for an in-memory database and inside a transaction', async (t) => {
    const connection = connect({ kind: 'sqlite', path: ':memory:' })
    t.after(() => connection.close())
    assert.equal(sqliteReaderOf(connection.db), undefined)
    const db = openFile(t)
    await db.transaction().execute(async (trx) => {
      assert.equal(sqliteReaderOf(trx), undefined)
    })
  })
})
