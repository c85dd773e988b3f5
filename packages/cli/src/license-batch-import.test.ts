import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { it, type TestContext } from 'node:test'
import { describeEachDatabase } from '@keyturn/server/testing/each-database'
import { keyturn } from './testing/keyturn-in-process.js'
import { licenseCount, startCliTestServer } from './testing/test-server.js'

function aFile(t: TestContext, name: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-batch-import-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

// Rows per file: two batches of the import's 500 rows (the default --concurrency sends both at once),
// and the two files at once: batches run side by side from the first run on. More rows add time,
// not cases.
const half = 1000
/** The row that fails (validation); not one of the revoked ones (every 100th). */
const badRow = 555
// The test server's clock stands at 2030-01-01T00:00:00Z.
const lastSeenAt = '2029-12-31T12:00:00.000Z'

describeEachDatabase('keyturn licenses import --keep-keys of 2,000 rows (CSV and JSON Lines)', (database) => {
  it('imports keys, machines and customers once, however often it runs; a bad row fails alone', async (t) => {
    const server = await startCliTestServer(t, database)
    const p = server.productId
    const machine = (n: number) => [{ fingerprint: `machine-${n}`, name: `Machine ${n}`, lastSeenAt }]
    const csvRows = Array.from({ length: half }, (_, n) => {
      const activations = JSON.stringify(machine(n)).replaceAll('"', '""')
      const bad = n === badRow ? 'no-such-feature' : ''
      return `${p},OLD-KEY-${n},csv-${n},customer-${n % 500}@example.com,2,"${activations}",${n % 100 === 0 ? 'revoked' : 'active'},${bad}`
    })
    const csv = aFile(
      t,
      'old.csv',
      `productId,key,externalId,customerEmail,maxActivations,activations,status,entitlements\n${csvRows.join('\n')}\n`,
    )
    const jsonl = aFile(
      t,
      'old.jsonl',
      Array.from({ length: half }, (_, n) =>
        JSON.stringify({
          productId: p,
          key: `OLD-KEY-${half + n}`,
          externalId: `jsonl-${n}`,
          customerEmail: `customer-${n % 500}@example.com`,
          uses: n,
          activations: machine(half + n),
        }),
      ).join('\n'),
    )

    const started = Date.now()
    // Side by side: both files name the same 500 customers, made once between them.
    const [fromCsv, fromJsonl] = await Promise.all([
      keyturn(['licenses', 'import', csv, '--keep-keys'], server.env),
      keyturn(['licenses', 'import', jsonl, '--keep-keys'], server.env),
    ])
    const firstRuns = Date.now() - started
    const again = await Promise.all([
      keyturn(['licenses', 'import', csv, '--keep-keys'], server.env),
      keyturn(['licenses', 'import', jsonl, '--keep-keys'], server.env),
    ])

    const badLine = badRow + 2 // after the header, from 1
    assert.equal(fromCsv.code, 1, fromCsv.stderr)
    assert.match(
      fromCsv.stderr,
      new RegExp(`^line ${badLine}: validation_failed: .*no-such-feature.* \\(req_\\w+\\)\\n$`),
    )
    assert.equal(
      fromCsv.stdout,
      `Imported ${half - 1} of ${half} rows; 1 failed (listed on stderr).\nRevoked ${half / 100} of them, as the file says (status revoked or suspended).\n`,
    )
    assert.equal(fromJsonl.code, 0, fromJsonl.stderr)
    assert.equal(fromJsonl.stdout, `Imported ${half} of ${half} rows.\n`)
    assert.match(
      again[0].stdout,
      new RegExp(`^Imported ${half - 1} of ${half} rows \\(${half - 1} of them by an earlier run\\)`),
    )
    assert.equal(again[1].stdout, `Imported ${half} of ${half} rows (${half} of them by an earlier run).\n`)
    assert.equal(await licenseCount(server), 2 * half - 1, 'nothing twice')

    const get = async (url: string) => {
      const res = await server.app.inject({ url: `/api/v0${url}`, headers: server.headers })
      assert.equal(res.statusCode, 200, res.body)
      return res.json()
    }
    assert.equal((await get('/customers?limit=1')).totalCount, 500, 'one customer per email')
    assert.equal((await get('/activations?limit=1')).totalCount, 2 * half - 1, 'one machine per license')
    const [license] = (await get(`/licenses?externalId=jsonl-7&productId=${p}`)).data
    assert.deepEqual([license.key, license.uses, license.activationCount], [`OLD-KEY-${half + 7}`, 7, 1])
    const [seat] = (await get(`/licenses/${license.id}/activations`)).data
    assert.deepEqual([seat.fingerprint, seat.lastSeenAt], [`machine-${half + 7}`, lastSeenAt])
    const validation = await server.app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers: server.headers,
      payload: { key: 'OLD-KEY-100', productId: p },
    })
    assert.equal(validation.json().reason, 'revoked')
    t.diagnostic(`first runs: ${firstRuns} ms for ${2 * half} rows`)
  })
})
