import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import type { LicenseResource } from '@keyturn/client'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

describe('keyturn customers, entitlements, policies and the license flags', () => {
  it('makes a license from a policy for a customer with flags, validates an entitlement and renews it', async (t) => {
    const server = await startCliTestServer(t)
    const run = async (args: string[]) => {
      const result = await keyturn([...args, '--json'], server.env)
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`)
      return JSON.parse(result.stdout)
    }
    await run(['entitlements', 'create', '--product', server.productId, '--code', 'pdf', '--name', 'PDF'])
    const policy = await run([
      'policies',
      'create',
      '--product',
      server.productId,
      '--name',
      'Pro',
      '--max-activations',
      '3',
      '--duration',
      '86400',
      '--entitlement',
      'pdf',
    ])
    const customer = await run(['customers', 'create', '--email', 'ada@example.com', '--metadata', 'crm=42'])
    const license: LicenseResource = await run([
      'licenses',
      'create',
      '--product',
      server.productId,
      '--policy',
      policy.id,
      '--customer',
      customer.id,
      '--metadata',
      'stripeSubscriptionId=sub_1',
      '--metadata',
      'plan=pro',
    ])
    assert.deepEqual(
      [
        license.policyId,
        license.customerId,
        license.maxActivations,
        license.expirationDate,
        license.entitlements,
      ],
      [policy.id, customer.id, 3, '2030-01-02T00:00:00.000Z', ['pdf']],
    )
    assert.deepEqual(license.metadata, { stripeSubscriptionId: 'sub_1', plan: 'pro' })

    const updated = await run(['licenses', 'update', license.id, '--metadata', 'plan=', '--customer', 'none'])
    assert.deepEqual([updated.metadata, updated.customerId], [{ stripeSubscriptionId: 'sub_1' }, null])
    const found = await run(['licenses', 'list', '--filter', 'metadata.stripeSubscriptionId:eq:sub_1'])
    assert.deepEqual(
      found.data.map((item: LicenseResource) => item.id),
      [license.id],
    )
    const valid = await run([
      'licenses',
      'validate',
      license.key,
      '--product',
      server.productId,
      '--entitlement',
      'pdf',
    ])
    assert.equal(valid.isValid, true)
    const missing = await keyturn(
      ['licenses', 'validate', license.key, '--product', server.productId, '--entitlement', 'sync'],
      server.env,
    )
    assert.equal(missing.code, 1)
    assert.match(missing.stdout, /^not valid: entitlements_missing\n/)
    const renewed = await run([
      'licenses',
      'renew',
      license.id,
      '--duration',
      '86400',
      '--idempotency-key',
      'inv_1',
    ])
    const retried = await run([
      'licenses',
      'renew',
      license.id,
      '--duration',
      '86400',
      '--idempotency-key',
      'inv_1',
    ])
    assert.equal(renewed.expirationDate, '2030-01-03T00:00:00.000Z')
    assert.equal(retried.expirationDate, renewed.expirationDate, 'the retry renewed nothing')
    const customers = await run(['customers', 'list', '--filter', 'email:eq:ADA@example.com'])
    assert.deepEqual(customers.data, [customer])
    await run(['licenses', 'update', license.id, '--entitlement', 'pdf'])
    const bare = await run(['policies', 'update', policy.id, '--no-entitlements'])
    assert.deepEqual(bare.entitlements, [])
    const own = await run(['licenses', 'get', license.id])
    assert.deepEqual(own.entitlements, ['pdf'], 'its own code stays when the policy loses it')
    const cleared = await run(['licenses', 'update', license.id, '--no-entitlements'])
    assert.deepEqual(cleared.entitlements, [])
    const both = await keyturn(
      ['policies', 'update', policy.id, '--entitlement', 'pdf', '--no-entitlements'],
      server.env,
    )
    assert.deepEqual(
      [both.code, both.stderr],
      [2, 'error: Give --entitlement or --no-entitlements, not both\n'],
    )
    const checkIn = await run([
      'policies',
      'update',
      policy.id,
      '--check-in-interval',
      '604800',
      '--grace-period',
      '259200',
    ])
    assert.deepEqual([checkIn.checkInInterval, checkIn.gracePeriod], [604_800, 259_200])
    const noCheckIn = await run(['policies', 'update', policy.id, '--check-in-interval', 'none'])
    assert.deepEqual([noCheckIn.checkInInterval, noCheckIn.gracePeriod], [null, 259_200])
    const badInterval = await keyturn(
      ['policies', 'update', policy.id, '--check-in-interval', 'weekly'],
      server.env,
    )
    assert.equal(badInterval.code, 2)
    assert.match(badInterval.stderr, /--check-in-interval/)
    const refused = await keyturn(['policies', 'delete', policy.id], server.env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /policy_in_use/)
  })

  it('exports customerEmail, policyId, entitlements and metadata, and imports them (finding or creating the customer)', async (t) => {
    const server = await startCliTestServer(t)
    const dir = mkdtempSync(join(tmpdir(), 'keyturn-vendors-'))
    t.after(() => rmSync(dir, { recursive: true, force: true }))
    const run = async (args: string[]) => {
      const result = await keyturn(args, server.env)
      assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`)
      return result.stdout
    }
    await run(['entitlements', 'create', '--product', server.productId, '--code', 'pdf', '--name', 'PDF'])
    await run(['entitlements', 'create', '--product', server.productId, '--code', 'sync', '--name', 'Sync'])
    const policy = JSON.parse(
      await run(['policies', 'create', '--product', server.productId, '--name', 'P', '--json']),
    )
    await run(['customers', 'create', '--email', 'Existing@example.com'])
    const csv = join(dir, 'in.csv')
    writeFileSync(
      csv,
      [
        'productId,customerEmail,policyId,entitlements,metadata,metadata.order',
        `${server.productId},existing@example.com,${policy.id},pdf sync,"{""tier"":2}",ord_1`,
        `${server.productId},new@example.com,,sync,,ord_2`,
        `${server.productId},new@example.com,,,,ord_3`,
        `${server.productId},,,teleport,,ord_4`,
      ].join('\n'),
    )

    const imported = await keyturn(['licenses', 'import', csv], server.env)
    assert.equal(imported.code, 1, 'the row naming an unknown entitlement fails')
    assert.match(imported.stdout, /^Imported 3 of 4 rows; 1 failed/)
    assert.match(imported.stderr, /line 5: validation_failed: .*teleport/)

    const out = join(dir, 'out.csv')
    await run(['licenses', 'export', '--product', server.productId, '--out', out])
    const lines = readFileSync(out, 'utf8').trimEnd().split('\r\n')
    assert.equal(
      lines[0],
      'id,key,productId,status,maxActivations,expirationDate,heartbeatTtl,maxUses,uses,activationCount,createdAt,updatedAt,customerId,customerEmail,policyId,entitlements,metadata,externalId',
    )
    const rows = lines.slice(1).map((line) => line.split(','))
    const emails = rows.map((row) => row[13]).sort()
    assert.deepEqual(emails, ['Existing@example.com', 'new@example.com', 'new@example.com'])
    const customers = JSON.parse(await run(['customers', 'list', '--json']))
    assert.equal(customers.totalCount, 2, 'new@example.com was created once')
    const jsonl = await run(['licenses', 'export', '--product', server.productId, '--format', 'jsonl'])
    const first = jsonl
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((license) => license.metadata.order === 'ord_1')
    assert.deepEqual(
      [first.policyId, first.entitlements, first.metadata, first.customerEmail],
      [policy.id, ['pdf', 'sync'], { tier: 2, order: 'ord_1' }, 'Existing@example.com'],
    )
  })
})
