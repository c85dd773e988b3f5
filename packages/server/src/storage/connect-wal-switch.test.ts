import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it } from 'node:test'
import { Worker } from 'node:worker_threads'
import { sql } from 'kysely'
import { type Connection, connect } from './connect.js'
import { migrateToLatest } from './migrate.js'

it('opens and migrates a new SQLite file while another process holds its write lock before the switch to WAL', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-wal-switch-'))
  const path = join(dir, 'keyturn.db')
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  // The other process (a thread: SQLite locks the file between them as between processes) has
  // opened the new file first and holds its write lock for a moment, as one that switches it to WAL.
  const other = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads')
     const db = new (require(workerData.driver))(workerData.path)
     db.pragma('busy_timeout = 5000')
     db.exec('begin immediate; create table written_first (id integer)')
     parentPort.postMessage('holding')
     setTimeout(() => {
       db.exec('commit')
       db.close()
       parentPort.postMessage('released')
     }, 250)`,
    { eval: true, workerData: { driver, path } },
  )
  const exited = new Promise((resolve) => other.once('exit', resolve))
  let connection: Connection | undefined
  t.after(async () => {
    await connection?.close()
    await exited
    rmSync(dir, { recursive: true, force: true })
  })
  const heard = (expected: string) =>
    new Promise((resolve, reject) => {
      other.on('message', (message) => message === expected && resolve(message))
      other.once('error', reject)
    })
  const released = heard('released')
  await heard('holding')

  // SQLite answers the switch to WAL with SQLITE_BUSY at once here, whatever the busy timeout.
  connection = connect({ kind: 'sqlite', path })
  await migrateToLatest(connection)

  await released
  const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(connection.db)
  assert.equal(mode.rows[0]?.journal_mode, 'wal')
  const tables = await sql<{ name: string }>`
    select name from sqlite_master where name in ('written_first', 'licenses') order by name`.execute(
    connection.db,
  )
  assert.deepEqual(
    tables.rows.map((row) => row.name),
    ['licenses', 'written_first'],
    "the other process's write and the migrations are both there",
  )
})
