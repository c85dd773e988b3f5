import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import type { TestDatabase } from '@keyturn/server/testing/each-database'
import { startTestServer } from '@keyturn/server/testing/listening-app'
import { connect, migrateToLatest } from '@keyturn/server/testing/storage'
import SqliteDatabase from 'better-sqlite3'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startKeyturn } from '../testing/keyturn-process.js'

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-backup-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A SQLite database file (WAL, as `serve` opens it), migrated. */
function sqliteFile(path: string): TestDatabase {
  return {
    kind: 'sqlite',
    async open() {
      const connection = connect({ kind: 'sqlite', path })
      await migrateToLatest(connection)
      return connection
    },
  }
}

function licenseIds(path: string): Set<string> {
  const db = new SqliteDatabase(path, { readonly: true, fileMustExist: true })
  try {
    const rows = db.prepare('select id from licenses').all() as { id: string }[]
    return new Set(rows.map((row) => row.id))
  } finally {
    db.close()
  }
}

describe('keyturn backup and restore (SQLite)', () => {
  it('copies every write acknowledged before the backup while writes go on, and restores a copy that passes integrity_check', async (t) => {
    const dir = tempDir(t)
    const source = join(dir, 'data', 'keyturn.db')
    const server = await startTestServer(t, sqliteFile(source))
    const createLicense = async () => {
      const res = await server.app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers: server.headers,
        payload: { productId: server.productId, maxActivations: 3 },
      })
      assert.equal(res.statusCode, 201, res.body)
      return res.json().id as string
    }
    for (let index = 0; index < 150; index++) {
      await createLicense()
    }
    const acknowledged: string[] = []
    let writing = true
    const writes = (async () => {
      while (writing) {
        acknowledged.push(await createLicense())
      }
    })()
    while (acknowledged.length < 20) {
      await new Promise((resolve) => setImmediate(resolve))
    }

    const before = new Set([...licenseIds(source)])
    const out = join(dir, 'keyturn-backup.db')
    const backup = startKeyturn(['backup', '--out', out], { KEYTURN_DATABASE_URL: `sqlite:${source}` })
    const duringBackup = acknowledged.length
    const backedUp = await backup.finished
    const afterBackup = acknowledged.length
    writing = false
    await writes

    assert.equal(backedUp.code, 0, backedUp.stderr)
    assert.match(
      backedUp.stdout,
      /^Backed up .+keyturn\.db to .+keyturn-backup\.db \(\d+ bytes; integrity check ok\)\./,
    )
    assert.match(backedUp.stdout, /The master secret is not in the backup: keep .+keyturn\.secret safe too/)
    assert.equal(statSync(out).mode & 0o777, 0o600, 'only its owner may read a backup')
    assert.ok(afterBackup > duringBackup, 'writes went on while the backup ran')

    const target = join(dir, 'restored', 'keyturn.db')
    const restored = await keyturn(['restore', out], { KEYTURN_DATABASE_URL: `sqlite:${target}` })
    assert.equal(restored.code, 0, restored.stderr)
    assert.match(restored.stdout, /^Restored .+keyturn-backup\.db to .+restored\/keyturn\.db\./)
    assert.match(restored.stdout, /Put the master secret of the backed-up server into .+keyturn\.secret/)

    assert.equal(statSync(target).mode & 0o777, 0o600, 'nor the restored database')
    const copy = new SqliteDatabase(target, { readonly: true, fileMustExist: true })
    try {
      assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok')
    } finally {
      copy.close()
    }
    const inCopy = licenseIds(target)
    const missing = [...before].filter((id) => !inCopy.has(id))
    assert.deepEqual(missing, [], 'every acknowledged write before the backup is in the copy')
    assert.ok(inCopy.size >= before.size + 0 && inCopy.size <= licenseIds(source).size)
  })

  it('refuses to restore where a database exists, to overwrite a backup, or to restore a file that is not a Keyturn database', async (t) => {
    const dir = tempDir(t)
    const source = join(dir, 'data', 'keyturn.db')
    const server = await startTestServer(t, sqliteFile(source))
    const out = join(dir, 'backup.db')
    const first = await keyturn(['backup', '--out', out], { KEYTURN_DATABASE_URL: `sqlite:${source}` })
    assert.equal(first.code, 0, first.stderr)
    const backupBytes = readFileSync(out)
    const notKeyturn = join(dir, 'other.db')
    new SqliteDatabase(notKeyturn).exec('create table notes (text)').close()
    const notSqlite = join(dir, 'notes.txt')
    writeFileSync(notSqlite, 'hello\n'.repeat(200))

    const [again, ontoLive, other, text] = await Promise.all([
      keyturn(['backup', '--out', out], { KEYTURN_DATABASE_URL: `sqlite:${source}` }),
      keyturn(['restore', out, '--database-url', `sqlite:${source}`]),
      keyturn(['restore', notKeyturn], { KEYTURN_DATABASE_URL: `sqlite:${join(dir, 'a', 'keyturn.db')}` }),
      keyturn(['restore', notSqlite], { KEYTURN_DATABASE_URL: `sqlite:${join(dir, 'b', 'keyturn.db')}` }),
    ])

    assert.deepEqual(
      [again.code, ontoLive.code, other.code, text.code],
      [1, 1, 1, 1],
      [again, ontoLive, other, text].map((run) => run.stderr).join('\n'),
    )
    assert.match(again.stderr, /backup\.db exists: a backup never overwrites a file/)
    assert.match(
      ontoLive.stderr,
      /keyturn\.db and .+keyturn\.db-wal exist: restore only puts a backup into an empty data location/,
    )
    assert.match(other.stderr, /other\.db is not a Keyturn database/)
    assert.match(text.stderr, /notes\.txt is not a SQLite database/)
    assert.deepEqual(readFileSync(out), backupBytes)
    const res = await server.app.inject({ url: '/api/v0/products', headers: server.headers })
    assert.equal(res.statusCode, 200, 'the live database still serves')
  })

  it('explains pg_dump and pg_restore for PostgreSQL, without connecting', async () => {
    const env = { KEYTURN_DATABASE_URL: 'postgres://keyturn@127.0.0.1:1/keyturn' }
    const [backup, restore] = await Promise.all([
      keyturn(['backup', '--out', 'keyturn.dump'], env),
      keyturn(['restore', 'keyturn.dump'], env),
    ])

    assert.deepEqual([backup.code, restore.code], [1, 1])
    assert.match(
      backup.stderr,
      /^keyturn backup copies SQLite databases\.\nFor PostgreSQL, use its own tools/,
    )
    assert.match(backup.stderr, /pg_dump --format=custom --file=keyturn\.dump "\$KEYTURN_DATABASE_URL"/)
    assert.match(restore.stderr, /pg_restore --no-owner --dbname="\$KEYTURN_DATABASE_URL" keyturn\.dump/)
  })
})
