import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import SqliteDatabase from 'better-sqlite3'
import { type Kysely, sql } from 'kysely'
import { connect } from './connect.js'
import type { Database } from './database.js'
import { writeTransaction } from './write-transaction.js'

/**
 * A SQLite file, the server's connection to it, and a second connection to the same file that
 * sees only what is committed (what another `keyturn serve` process would see).
 */
function openBoth(t: TestContext) {
  const folder = mkdtempSync(join(tmpdir(), 'keyturn-group-commit-'))
  const connection = connect({ kind: 'sqlite', path: join(folder, 'keyturn.db') })
  const other = new SqliteDatabase(join(folder, 'keyturn.db'))
  t.after(async () => {
    other.close()
    await connection.close()
    rmSync(folder, { recursive: true, force: true })
  })
  const committed = () =>
    (other.prepare('select name from notes order by name').all() as { name: string }[]).map((row) => row.name)
  return { db: connection.db, committed }
}

const note = (db: Kysely<Database>, name: string) =>
  sql`insert into notes (name) values (${name})`.execute(db)

describe('SQLite group commit', () => {
  it('commits writes that arrive together once, and returns each only after that commit', async (t) => {
    const { db, committed } = openBoth(t)
    await sql`create table notes (name text primary key)`.execute(db)
    const seenWhenReturned: string[][] = []

    await Promise.all(
      ['a', 'b', 'c', 'd'].map((name) =>
        writeTransaction(db, (trx) => note(trx, name)).then(() => seenWhenReturned.push(committed())),
      ),
    )

    // Even the first write to return was committed with the last one: one commit for the four.
    assert.deepEqual(seenWhenReturned, [
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
    ])
  })

  it('rolls back only the write that fails, and commits the others of its group', async (t) => {
    const { db, committed } = openBoth(t)
    await sql`create table notes (name text primary key)`.execute(db)

    const outcomes = await Promise.allSettled([
      writeTransaction(db, (trx) => note(trx, 'a')),
      writeTransaction(db, async (trx) => {
        await note(trx, 'half-written')
        await note(trx, 'a') // a duplicate: this write fails after its first insert
      }),
      writeTransaction(db, (trx) => note(trx, 'c')),
    ])

    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    )
    assert.deepEqual(committed(), ['a', 'c'])
  })

  it('fails every write of a group SQLite rolled back whole, so none is acknowledged', async (t) => {
    const { db, committed } = openBoth(t)
    await sql`create table notes (name text primary key)`.execute(db)

    const outcomes = await Promise.allSettled([
      writeTransaction(db, (trx) => note(trx, 'a')),
      // What SQLite does itself on a full disk or an I/O error: the whole transaction is gone.
      writeTransaction(db, (trx) => sql`rollback`.execute(trx)),
    ])
    const after = await writeTransaction(db, (trx) => note(trx, 'b')).then(() => committed())

    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      ['rejected', 'rejected'],
    )
    assert.deepEqual(after, ['b'], 'the next group starts afresh')
  })
})
