import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseDatabaseUrl } from './connect.js'
import { parsePostgresTarget } from './postgres-hosts.js'

describe('a PostgreSQL URL with a host list', () => {
  it('reads every host and target_session_attrs, and gives node-postgres the first host', () => {
    assert.deepEqual(
      parsePostgresTarget(
        'postgres://keyturn:s%40cret@db1.internal:5433,db2.internal,[::1]:6000/keyturn?sslmode=require&target_session_attrs=read-write',
      ),
      {
        url: 'postgres://keyturn:s%40cret@db1.internal:5433/keyturn?sslmode=require',
        hosts: [
          { host: 'db1.internal', port: 5433 },
          { host: 'db2.internal', port: 5432 },
          { host: '::1', port: 6000 },
        ],
        readWrite: true,
      },
    )
    assert.equal(parsePostgresTarget('postgresql://a,b/db?target_session_attrs=primary').readWrite, true)
    assert.equal(parsePostgresTarget('postgresql://a,b/db').readWrite, false)
  })

  it('leaves a URL with one host and no target_session_attrs as it is', () => {
    const url = 'postgres://user:pw@localhost:5432/keyturn?options=-c%20search_path%3Dx'
    assert.deepEqual(parsePostgresTarget(url), {
      url,
      hosts: [{ host: 'localhost', port: 5432 }],
      readWrite: false,
    })
  })

  it('refuses what it cannot honour, so the configuration says so at start', () => {
    for (const url of [
      'postgres://a,b/db?target_session_attrs=read-only',
      'postgres://a:99999/db',
      'postgres://a,:5432/db',
    ]) {
      assert.equal(parseDatabaseUrl(url), undefined, url)
    }
  })
})
