import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import type { LicenseResource } from '@keyturn/client'
import type { ProductId } from '@keyturn/protocol'
import { createProduct } from '@keyturn/server/testing/build-test-app'
import { exportColumns } from './license-csv.js'
import { keyturn } from './testing/keyturn-in-process.js'
import { type CliTestServer, startCliTestServer } from './testing/test-server.js'

function aDirectory(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-round-trip-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function post<T>(
  server: CliTestServer,
  url: string,
  payload: Record<string, unknown> = {},
): Promise<T> {
  const res = await server.app.inject({
    method: 'POST',
    url: `/api/v0${url}`,
    headers: server.headers,
    payload,
  })
  assert.ok(res.statusCode === 200 || res.statusCode === 201, `${url}: ${res.body}`)
  return res.json()
}

/** A product with an entitlement and a policy, as an export's target or source. */
async function aProduct(server: CliTestServer, productId: ProductId) {
  await post(server, '/entitlements', { productId, code: 'export-pdf', name: 'Export to PDF' })
  const policy = await post<{ id: string }>(server, '/policies', {
    productId,
    name: 'Pro',
    maxActivations: 2,
    entitlements: ['export-pdf'],
  })
  return { productId, policyId: policy.id }
}

/** One license of every shape the API can make, in the product. */
async function everyShape(server: CliTestServer, productId: ProductId, policyId: string): Promise<void> {
  const customer = await post<{ id: string }>(server, '/customers', { email: 'ada@example.com' })
  const shapes: Record<string, unknown>[] = [
    { maxActivations: 3 },
    { maxActivations: null },
    { maxActivations: 5, heartbeatTtl: 600 },
    { maxUses: 1000 },
    { expirationDate: '2031-06-30T23:59:59.999Z' },
    { customerId: customer.id },
    { metadata: { plan: 'pro', seats: 3, reseller: null } },
    { entitlements: ['export-pdf'] },
    { policyId },
    { policyId, maxActivations: 7, heartbeatTtl: 120, maxUses: 50 },
  ]
  for (const shape of shapes) {
    await post(server, '/licenses', { productId, ...shape })
  }
  const revoked = await post<LicenseResource>(server, '/licenses', { productId, maxUses: 10 })
  await post(server, `/licenses/${revoked.id}/revoke`)
}

async function exportJsonl(server: CliTestServer, productId: ProductId): Promise<LicenseResource[]> {
  const run = await keyturn(['licenses', 'export', '--product', productId, '--format', 'jsonl'], server.env)
  assert.equal(run.code, 0, run.stderr)
  return run.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
}

/** What a license's holder would see of its terms: everything but ids, keys, times and counts. */
function terms(
  licenses: readonly (LicenseResource & { customerEmail?: string | null })[],
  policies: Record<string, string>,
) {
  return licenses
    .map((license) =>
      JSON.stringify([
        license.status,
        license.maxActivations,
        license.expirationDate,
        license.heartbeatTtl,
        license.maxUses,
        license.customerEmail,
        license.policyId === null ? null : (policies[license.policyId] ?? license.policyId),
        license.entitlements,
        license.metadata,
      ]),
    )
    .sort()
}

describe('licenses export, then import into another product', () => {
  it('writes every field import reads in the CSV', () => {
    for (const field of [
      'heartbeatTtl',
      'maxUses',
      'maxActivations',
      'expirationDate',
      'policyId',
      'status',
    ]) {
      assert.ok((exportColumns as readonly string[]).includes(field), field)
    }
  })

  for (const format of ['csv', 'jsonl'] as const) {
    it(`keeps every license's terms, status and policy (mapped) in ${format}`, async (t) => {
      const server = await startCliTestServer(t)
      const source = await aProduct(server, server.productId)
      const target = await aProduct(server, await createProduct(server.app, server.headers))
      await everyShape(server, source.productId, source.policyId)
      const file = join(aDirectory(t), `licenses.${format}`)

      const out = await keyturn(
        ['licenses', 'export', '--product', source.productId, '--format', format, '--out', file],
        server.env,
      )
      const imported = await keyturn(
        [
          'licenses',
          'import',
          file,
          '--product',
          target.productId,
          '--policy-map',
          `${source.policyId}=${target.policyId}`,
        ],
        server.env,
      )

      assert.equal(out.code, 0, out.stderr)
      assert.equal(imported.code, 0, imported.stderr)
      assert.equal(
        imported.stdout,
        [
          'Imported 11 of 11 rows.',
          'Revoked 1 of them, as the file says (status revoked or suspended).',
          `Policy ${source.policyId} → ${target.policyId} on 2 rows (--policy-map).`,
          '',
        ].join('\n'),
      )
      const [original, copy] = await Promise.all([
        exportJsonl(server, source.productId),
        exportJsonl(server, target.productId),
      ])
      assert.equal(copy.length, 11)
      assert.deepEqual(
        terms(copy, {}),
        terms(original, { [source.policyId]: target.policyId }),
        'the same terms, with the target product’s policy',
      )
      if (format === 'csv') {
        const header = readFileSync(file, 'utf8').split('\r\n')[0] ?? ''
        assert.match(header, /,heartbeatTtl,maxUses,/)
      }
    })
  }

  it('refuses, row by row, a policy of another product that --policy-map does not map, naming it', async (t) => {
    const server = await startCliTestServer(t)
    const source = await aProduct(server, server.productId)
    const { productId: target } = await aProduct(server, await createProduct(server.app, server.headers))
    await post(server, '/licenses', { productId: source.productId, policyId: source.policyId })
    await post(server, '/licenses', { productId: source.productId, maxActivations: 4 })
    const file = join(aDirectory(t), 'licenses.jsonl')
    await keyturn(
      ['licenses', 'export', '--product', source.productId, '--format', 'jsonl', '--out', file],
      server.env,
    )

    const refused = await keyturn(['licenses', 'import', file, '--product', target], server.env)
    const dropped = await keyturn(
      ['licenses', 'import', file, '--product', target, '--policy-map', `${source.policyId}=none`],
      server.env,
    )

    assert.equal(refused.code, 1)
    assert.match(
      refused.stderr,
      new RegExp(
        `^line 1: policy ${source.policyId} is not a policy of product ${target} .*--policy-map ${source.policyId}=`,
      ),
    )
    assert.equal(refused.stdout, 'Imported 1 of 2 rows; 1 failed (listed on stderr).\n')
    assert.equal(dropped.code, 0, dropped.stderr)
    assert.match(dropped.stdout, new RegExp(`Policy ${source.policyId} → none on 1 row`))
    const copies = await exportJsonl(server, target)
    assert.deepEqual(
      copies.map((license) => license.policyId),
      [null, null],
    )
  })

  it('exits 2 for a --policy-map that is not old=new pairs', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(['licenses', 'import', 'x.csv', '--policy-map', 'pol_a'], server.env)

    assert.equal(run.code, 2)
    assert.match(run.stderr, /--policy-map must be old=new pairs/)
  })
})

describe('licenses update --policy', () => {
  it('moves a license to another policy, resetting its expiry when asked, and back to none', async (t) => {
    const server = await startCliTestServer(t)
    const { productId, policyId } = await aProduct(server, server.productId)
    const license = await post<LicenseResource>(server, '/licenses', { productId, maxActivations: 7 })

    const moved = await keyturn(
      ['licenses', 'update', license.id, '--policy', policyId, '--expiry', 'reset', '--json'],
      server.env,
    )
    assert.equal(moved.code, 0, moved.stderr)
    const body = JSON.parse(moved.stdout) as LicenseResource
    assert.deepEqual([body.policyId, body.maxActivations, body.entitlements], [policyId, 2, ['export-pdf']])

    const detached = await keyturn(
      ['licenses', 'update', license.id, '--policy', 'none', '--json'],
      server.env,
    )
    assert.equal(detached.code, 0, detached.stderr)
    assert.deepEqual((JSON.parse(detached.stdout) as LicenseResource).policyId, null)

    const refused = await keyturn(['licenses', 'update', license.id, '--expiry', 'reset'], server.env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /expiry is given only with policyId/)
  })
})

describe('keys of your own', () => {
  it('creates a license with --key and imports rows keeping their keys with --keep-keys', async (t) => {
    const server = await startCliTestServer(t)
    const created = await keyturn(
      ['licenses', 'create', '--product', server.productId, '--key', 'OLD-SYSTEM-0001', '--json'],
      server.env,
    )
    assert.equal(created.code, 0, created.stderr)
    assert.equal((JSON.parse(created.stdout) as LicenseResource).key, 'OLD-SYSTEM-0001')

    const dir = aDirectory(t)
    const file = join(dir, 'old.jsonl')
    writeFileSync(
      file,
      [
        { productId: server.productId, key: 'OLD-SYSTEM-0002', maxActivations: 2 },
        { productId: server.productId, key: 'OLD-SYSTEM-0001' },
        { productId: server.productId },
      ]
        .map((row) => JSON.stringify(row))
        .join('\n'),
    )
    const run = await keyturn(['licenses', 'import', file, '--keep-keys'], server.env)
    assert.equal(run.code, 1, run.stdout)
    assert.match(run.stderr, /line 2: .*license_key_taken/)
    assert.match(run.stderr, /line 3: key is empty/)
    const valid = await post<{ license: LicenseResource }>(server, '/licenses/validate', {
      key: 'OLD-SYSTEM-0002',
      productId: server.productId,
    })
    assert.equal(valid.license.maxActivations, 2)
  })

  it('carries uses and machines over with --keep-keys, once however often the import runs', async (t) => {
    const server = await startCliTestServer(t)
    const dir = aDirectory(t)
    const file = join(dir, 'moved.csv')
    writeFileSync(
      file,
      [
        'productId,key,maxActivations,maxUses,uses,activations,status,externalId',
        `${server.productId},MOVED-0001,3,100,42,"[{""fingerprint"":""machine-a-0001"",""name"":""Ada's laptop""},{""fingerprint"":""machine-b-0002""}]",active,old-1`,
        `${server.productId},MOVED-0002,1,,7,"[{""fingerprint"":""machine-c-0003""}]",revoked,old-2`,
        `${server.productId},MOVED-0003,1,,-1,,,old-3`,
        `${server.productId},MOVED-0004,1,,,"[{""name"":""no fingerprint""}]",,old-4`,
      ].join('\n'),
    )
    for (const run of [1, 2]) {
      const result = await keyturn(['licenses', 'import', file, '--keep-keys'], server.env)
      assert.equal(result.code, 1, `run ${run}: ${result.stdout}`)
      assert.match(result.stderr, /line 4: uses must be >= 0/)
      assert.match(result.stderr, /line 5: activations\/0 must have required properties fingerprint/)
    }
    const moved = await exportJsonl(server, server.productId)
    const byKey = new Map(moved.map((license) => [license.key, license]))
    assert.deepEqual(
      [...byKey.keys()].sort(),
      ['MOVED-0001', 'MOVED-0002'],
      'the bad rows made nothing, a second run made nothing more',
    )
    assert.equal(byKey.get('MOVED-0001')?.uses, 42)
    assert.equal(byKey.get('MOVED-0001')?.activationCount, 2)
    assert.equal(byKey.get('MOVED-0002')?.uses, 7)
    assert.equal(byKey.get('MOVED-0002')?.activationCount, 1)
    assert.equal(byKey.get('MOVED-0002')?.status, 'revoked')
    const machines = await server.app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${byKey.get('MOVED-0001')?.id}/activations`,
      headers: server.headers,
    })
    assert.equal(machines.statusCode, 200, machines.body)
    assert.deepEqual(
      (machines.json().data as { fingerprint: string; name: string | null }[])
        .map((machine) => [machine.fingerprint, machine.name])
        .sort(),
      [
        ['machine-a-0001', "Ada's laptop"],
        ['machine-b-0002', null],
      ],
    )
  })
})
