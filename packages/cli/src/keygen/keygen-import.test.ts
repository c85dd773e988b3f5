import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { keygenTime, writeKeygenExport } from '../testing/keygen-export-writer.js'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

const account = 'a0000000-0000-4000-8000-000000000000'
const product = 'b0000000-0000-4000-8000-000000000001'
const floating = 'c0000000-0000-4000-8000-000000000001'
const locked = 'c0000000-0000-4000-8000-000000000002'
const ada = 'd0000000-0000-4000-8000-000000000001'
const sync = 'e0000000-0000-4000-8000-000000000001'
const pdf = 'e0000000-0000-4000-8000-000000000002'
const lic = (n: number) => `f0000000-0000-4000-8000-00000000000${n}`
const at = (iso: string) => keygenTime(iso)

/** A small Keygen account, as its exporter writes it (the server's test clock is 2030-01-01). */
const chunks = [
  { className: 'Account', records: [{ id: account, name: 'Acme', slug: 'acme' }] },
  {
    className: 'Product',
    records: [{ id: product, account_id: account, name: 'Acme Editor', metadata: {} }],
  },
  {
    className: 'Policy',
    records: [
      {
        id: floating,
        product_id: product,
        name: 'Team',
        floating: true,
        max_machines: 3,
        require_heartbeat: true,
        heartbeat_duration: null,
        duration: null,
        require_check_in: true,
        check_in_interval: 'week',
        check_in_interval_count: 2,
      },
      {
        id: locked,
        product_id: product,
        name: 'Personal',
        floating: false,
        max_machines: 1,
        duration: 31_536_000,
        expiration_basis: 'FROM_FIRST_ACTIVATION',
        require_heartbeat: false,
      },
    ],
  },
  {
    className: 'Entitlement',
    records: [
      { id: sync, code: 'CLOUD_SYNC', name: 'Cloud sync' },
      { id: pdf, code: 'export-pdf', name: 'Export to PDF' },
    ],
  },
  { className: 'PolicyEntitlement', records: [{ id: 'pe1', policy_id: floating, entitlement_id: sync }] },
  { className: 'LicenseEntitlement', records: [{ id: 'le1', license_id: lic(2), entitlement_id: pdf }] },
  {
    className: 'User',
    records: [
      { id: ada, email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', password_digest: 'x' },
    ],
  },
  {
    className: 'License',
    records: [
      {
        id: lic(1),
        key: 'ACME-TEAM-0001',
        product_id: product,
        policy_id: floating,
        user_id: ada,
        uses: 12,
        suspended: false,
        expiry: at('2031-01-01T00:00:00.000Z'),
        metadata: { plan: 'team' },
        created_at: at('2029-01-01T00:00:00.000Z'),
      },
      {
        id: lic(2),
        key: 'ACME-PERSONAL-0002',
        product_id: product,
        policy_id: locked,
        user_id: ada,
        suspended: true,
        expiry: null,
      },
      {
        id: lic(3),
        key: 'ACME-PERSONAL-0003',
        product_id: product,
        policy_id: locked,
        expiry: at('2029-06-01T00:00:00.000Z'),
      },
      {
        id: lic(4),
        key: 'ACME-TEAM-0004',
        product_id: product,
        policy_id: floating,
        group_id: 'g1',
        max_machines_override: 10,
      },
    ],
  },
  {
    className: 'Machine',
    records: [
      {
        id: 'm1',
        license_id: lic(1),
        fingerprint: 'fp-1',
        name: 'Build box',
        last_heartbeat_at: at('2029-12-31T23:55:00.000Z'),
      },
      {
        id: 'm2',
        license_id: lic(1),
        fingerprint: 'fp-2',
        hostname: 'old-laptop',
        last_heartbeat_at: at('2029-11-01T00:00:00.000Z'),
      },
      { id: 'm3', license_id: lic(3), fingerprint: 'fp-3', last_heartbeat_at: null },
    ],
  },
  { className: 'Group', records: [{ id: 'g1', name: 'Design team' }] },
  {
    className: 'MachineProcess',
    records: [
      { id: 'p1', pid: '42' },
      { id: 'p2', pid: '43' },
    ],
  },
  { className: 'Release', records: [{ id: 'r1', version: '1.0.0' }] },
]

function aFile(t: TestContext, name: string, content: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-keygen-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

describe('keyturn import keygen', () => {
  it('says in a dry run what the export maps to and what it cannot map, and sends nothing', async (t) => {
    const file = aFile(t, 'plain.export', writeKeygenExport(chunks))

    const run = await keyturn(['import', 'keygen', file, '--dry-run'], {})

    assert.equal(run.code, 0, run.stderr)
    assert.equal(
      run.stdout,
      [
        'Dry run: nothing is sent. The export maps to (found again when they exist):',
        '  products      1',
        '  policies      2',
        '  entitlements  2',
        '  customers     1 (license owners with an email)',
        '  licenses      4, with 3 machines',
        'Not mapped:',
        '  Account (1): the Keygen account itself: a Keyturn server is one vendor',
        '  Group (1): Keygen-only: groups of licenses, machines and users',
        '  MachineProcess (2): Keygen-only: processes of machines',
        '  Release (1): Keygen-only: releases and software distribution',
        'Notes:',
        `  license ${lic(4)}: its Keygen group is not kept`,
        '',
      ].join('\n'),
    )
  })

  it('imports an encrypted export once, however often it runs', async (t) => {
    const server = await startCliTestServer(t)
    const secretKey = 'f3a1c9e07b5d4a2e8c6f1b3d5a7e9c0b'
    const file = aFile(t, 'encrypted.export', writeKeygenExport(chunks, secretKey))
    const env = { ...server.env, KEYGEN_EXPORT_SECRET_KEY: secretKey }

    const withoutKey = await keyturn(['import', 'keygen', file], server.env)
    const wrongKey = await keyturn(['import', 'keygen', file, '--secret-key', 'not-the-key'], server.env)
    const first = await keyturn(['import', 'keygen', file], env)
    const second = await keyturn(['import', 'keygen', file], env)

    assert.equal(withoutKey.code, 2)
    assert.match(
      withoutKey.stderr,
      /chunk 1 is not MessagePack: the export is encrypted, pass its --secret-key/,
    )
    assert.equal(wrongKey.code, 2)
    assert.match(wrongKey.stderr, /chunk 1 does not decrypt with this secret key/)
    assert.equal(first.code, 0, first.stderr)
    assert.equal(
      first.stdout,
      'Products: 1 created, 0 found again. Policies: 2 created, 0 found again. Entitlements: 2 created.\n' +
        'Licenses: 4 created, 0 imported by an earlier run, of 4.\n' +
        'Not mapped: Account (1), Group (1), MachineProcess (2), Release (1); --dry-run says why.\n',
    )
    assert.equal(second.code, 0, second.stderr)
    assert.equal(
      second.stdout,
      'Products: 0 created, 1 found again. Policies: 0 created, 2 found again. Entitlements: 0 created.\n' +
        'Licenses: 0 created, 4 imported by an earlier run, of 4.\n' +
        'Not mapped: Account (1), Group (1), MachineProcess (2), Release (1); --dry-run says why.\n',
    )

    const get = async (url: string) => {
      const res = await server.app.inject({ url: `/api/v0${url}`, headers: server.headers })
      assert.equal(res.statusCode, 200, res.body)
      return res.json()
    }
    const products = (await get('/products')).data.filter((p: { name: string }) => p.name === 'Acme Editor')
    assert.equal(products.length, 1)
    const productId = products[0].id
    const policies = (await get(`/policies?productId=${productId}`)).data
    const team = policies.find((p: { name: string }) => p.name === 'Team')
    const personal = policies.find((p: { name: string }) => p.name === 'Personal')
    assert.deepEqual(
      [team.maxActivations, team.heartbeatTtl, team.duration, team.checkInInterval, team.entitlements],
      [3, 600, null, 14 * 86_400, ['cloud_sync']],
    )
    assert.deepEqual(
      [personal.maxActivations, personal.duration, personal.expirationBasis],
      [1, 31_536_000, 'firstActivation'],
    )
    const license = async (n: number) =>
      (await get(`/licenses?productId=${productId}&externalId=${lic(n)}`)).data[0]
    const one = await license(1)
    assert.deepEqual(
      [one.key, one.status, one.expirationDate, one.uses, one.policyId, one.entitlements, one.metadata],
      ['ACME-TEAM-0001', 'active', '2031-01-01T00:00:00.000Z', 12, team.id, ['cloud_sync'], { plan: 'team' }],
    )
    // The old laptop's last heartbeat is two months old: with a ten-minute heartbeat it holds no seat.
    assert.equal(one.activationCount, 1)
    const seats = (await get(`/licenses/${one.id}/activations`)).data
    assert.deepEqual(
      seats.map((s: { fingerprint: string; name: string; lastSeenAt: string }) => [
        s.fingerprint,
        s.name,
        s.lastSeenAt,
      ]),
      [['fp-1', 'Build box', '2029-12-31T23:55:00.000Z']],
    )
    const customer = await get(`/customers/${one.customerId}`)
    assert.deepEqual([customer.email, customer.name], ['ada@example.com', 'Ada Lovelace'])
    const two = await license(2)
    assert.deepEqual(
      [two.status, two.metadata.importedStatus, two.entitlements],
      ['revoked', 'suspended', ['export-pdf']],
    )
    assert.equal((await license(3)).status, 'expired')
    assert.equal((await license(4)).maxActivations, 10)
  })
})
