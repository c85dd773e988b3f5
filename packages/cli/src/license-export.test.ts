import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import type { LicenseResource } from '@keyturn/client'
import type { ProductId } from '@keyturn/protocol'
import { createProduct } from '@keyturn/server/testing/build-test-app'
import { aLicense, insertLicenses } from '@keyturn/server/testing/licenses'
import { keyturn } from './testing/keyturn-in-process.js'
import { type CliTestServer, startCliTestServer } from './testing/test-server.js'

function aDirectory(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-export-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Licenses with every kind of terms: limited and unlimited, expiring and not. */
async function aVarietyOfLicenses(server: CliTestServer, count: number): Promise<void> {
  await insertLicenses(
    server.connection,
    Array.from({ length: count }, (_, n) =>
      aLicense({
        productId: server.productId,
        maxActivations: n % 3 === 0 ? null : n + 1,
        expirationDate: n % 4 === 0 ? null : new Date(Date.UTC(2031, 0, 1 + n)),
      }),
    ),
  )
}

const terms = (licenses: readonly LicenseResource[]) =>
  licenses.map((license) => `${license.maxActivations} ${license.expirationDate}`).sort()

async function exportJsonl(server: CliTestServer, productId: ProductId): Promise<LicenseResource[]> {
  const run = await keyturn(['licenses', 'export', '--product', productId, '--format', 'jsonl'], server.env)
  assert.equal(run.code, 0, run.stderr)
  return run.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
}

describe('keyturn licenses export', () => {
  it('streams every license, page by page, to stdout as CSV after a header', async (t) => {
    const server = await startCliTestServer(t)
    await aVarietyOfLicenses(server, 250)

    const run = await keyturn(['licenses', 'export'], server.env)

    assert.equal(run.code, 0, run.stderr)
    const lines = run.stdout.split('\r\n')
    assert.equal(
      lines[0],
      'id,key,productId,status,maxActivations,expirationDate,heartbeatTtl,maxUses,uses,activationCount,createdAt,updatedAt,customerId,customerEmail,policyId,entitlements,metadata,externalId',
    )
    assert.equal(lines.at(-1), '', 'ends with a line break')
    const ids = lines.slice(1, -1).map((line) => line.split(',')[0])
    assert.equal(ids.length, 250)
    assert.equal(new Set(ids).size, 250)
    assert.match(
      lines[1] ?? '',
      /^lic_\w+,[0-9A-Z-]{29},prd_\w+,active,(null|\d+),(null|2031-[^,]+),null,null,0,0,2030-/,
    )
  })

  it('writes --out and confirms it, or confirms it as JSON', async (t) => {
    const server = await startCliTestServer(t)
    await aVarietyOfLicenses(server, 3)
    const dir = aDirectory(t)

    const [csv, jsonl] = await Promise.all([
      keyturn(['licenses', 'export', '--out', join(dir, 'l.csv')], server.env),
      keyturn(
        ['licenses', 'export', '--format', 'jsonl', '--out', join(dir, 'l.jsonl'), '--json'],
        server.env,
      ),
    ])

    assert.equal(csv.stdout, `Exported 3 licenses to ${join(dir, 'l.csv')}.\n`)
    assert.equal(readFileSync(join(dir, 'l.csv'), 'utf8').split('\r\n').length, 5)
    assert.deepEqual(JSON.parse(jsonl.stdout), { exported: 3, format: 'jsonl', out: join(dir, 'l.jsonl') })
    const lines = readFileSync(join(dir, 'l.jsonl'), 'utf8').trimEnd().split('\n')
    assert.equal(JSON.parse(lines[0] ?? '').object, 'License')
  })

  for (const format of ['csv', 'jsonl'] as const) {
    it(`round-trips through import into another product (${format})`, async (t) => {
      const server = await startCliTestServer(t)
      await aVarietyOfLicenses(server, 40)
      const other = await createProduct(server.app, server.headers)
      const file = join(aDirectory(t), `licenses.${format}`)

      const out = await keyturn(['licenses', 'export', '--format', format, '--out', file], server.env)
      const imported = await keyturn(['licenses', 'import', file, '--product', other], server.env)

      assert.equal(out.code, 0, out.stderr)
      assert.equal(imported.code, 0, imported.stderr)
      assert.equal(imported.stdout, 'Imported 40 of 40 rows.\n')
      const [original, copy] = await Promise.all([
        exportJsonl(server, server.productId),
        exportJsonl(server, other),
      ])
      assert.equal(copy.length, 40)
      assert.deepEqual(terms(copy), terms(original))
      assert.ok(copy.every((license) => license.productId === other))
      assert.equal(new Set([...original, ...copy].map((license) => license.key)).size, 80, 'new keys')
    })
  }

  it('exits 2 for an unknown format or an --out it cannot write', async (t) => {
    const server = await startCliTestServer(t)

    const [format, out] = await Promise.all([
      keyturn(['licenses', 'export', '--format', 'xml'], server.env),
      keyturn(['licenses', 'export', '--out', join(tmpdir(), 'no-such-dir', 'l.csv')], server.env),
    ])

    assert.deepEqual([format.code, format.stderr], [2, 'error: --format must be csv or jsonl, not "xml"\n'])
    assert.equal(out.code, 2)
    assert.match(out.stderr, /^error: cannot write /)
  })
})
