import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ActivationResource, LicenseResource, Paginated } from '@keyturn/client'
import { keyturn } from '../testing/keyturn-in-process.js'
import { type CliTestServer, startCliTestServer } from '../testing/test-server.js'

async function aLicense(server: CliTestServer, maxActivations: string): Promise<LicenseResource> {
  const run = await keyturn(
    ['licenses', 'create', '--product', server.productId, '--max-activations', maxActivations, '--json'],
    server.env,
  )
  return JSON.parse(run.stdout)
}

describe('keyturn activations', () => {
  it('activates machines, lists them and deactivates one', async (t) => {
    const server = await startCliTestServer(t)
    const license = await aLicense(server, '2')

    const first = await keyturn(
      [
        'activations',
        'activate',
        license.id,
        '--fingerprint',
        'machine-a',
        '--name',
        'Ada',
        '--metadata',
        '{"os":"linux"}',
      ],
      server.env,
    )
    const second = await keyturn(
      ['activations', 'activate', license.id, '--fingerprint', 'machine-b', '--json'],
      server.env,
    )
    const [table, json, everyTable, everyJson] = await Promise.all([
      keyturn(['activations', 'list', license.id, '--sort', 'fingerprint:asc'], server.env),
      keyturn(['activations', 'list', license.id, '--json'], server.env),
      keyturn(['activations', 'list', '--limit', '1', '--sort', 'fingerprint:desc'], server.env),
      keyturn(['activations', 'list', '--product', server.productId, '--json'], server.env),
    ])
    const activation: ActivationResource = JSON.parse(second.stdout)
    const deactivated = await keyturn(['activations', 'deactivate', activation.id], server.env)
    const after = await keyturn(['activations', 'list', license.id, '--all', '--json'], server.env)

    assert.equal(first.code, 0, first.stderr)
    assert.match(first.stdout, new RegExp(`^Activated machine-a on ${license.id}: act_\\w+\\.\\n$`))
    assert.deepEqual([activation.fingerprint, activation.licenseId], ['machine-b', license.id])
    const lines = table.stdout.trimEnd().split('\n')
    assert.match(lines[0] ?? '', /^ID +FINGERPRINT +NAME +CREATED +LAST SEEN +LEASE ENDS$/)
    assert.match(lines[1] ?? '', /^act_\w+ +machine-a +Ada +2030-/)
    assert.match(lines[2] ?? '', /^act_\w+ +machine-b +- +2030-/)
    assert.equal((JSON.parse(json.stdout) as Paginated<ActivationResource>).totalCount, 2)
    const everyLines = everyTable.stdout.trimEnd().split('\n')
    assert.match(everyLines[0] ?? '', /^ID +LICENSE +FINGERPRINT +NAME +CREATED +LAST SEEN +LEASE ENDS$/)
    assert.match(everyLines[1] ?? '', new RegExp(`^act_\\w+ +${license.id} +machine-b +`))
    const every = JSON.parse(everyJson.stdout) as Paginated<ActivationResource>
    assert.deepEqual([every.totalCount, every.data[0]?.licenseId], [2, license.id])
    assert.deepEqual([deactivated.code, deactivated.stdout], [0, `Deactivated ${activation.id}.\n`])
    assert.deepEqual(
      (JSON.parse(after.stdout) as ActivationResource[]).map((item) => item.fingerprint),
      ['machine-a'],
    )
  })

  it('exits 1 with activation_limit_reached when every seat is taken, 2 for bad --metadata', async (t) => {
    const server = await startCliTestServer(t)
    const license = await aLicense(server, '1')
    await keyturn(['activations', 'activate', license.id, '--fingerprint', 'a'], server.env)

    const [full, badMetadata, noFingerprint] = await Promise.all([
      keyturn(['activations', 'activate', license.id, '--fingerprint', 'b'], server.env),
      keyturn(['activations', 'activate', license.id, '--fingerprint', 'b', '--metadata', '[1]'], server.env),
      keyturn(['activations', 'activate', license.id], server.env),
    ])

    assert.equal(full.code, 1)
    assert.match(full.stderr, /^activation_limit_reached: .+ \(req_\w+\)\n$/)
    assert.equal(badMetadata.code, 2)
    assert.match(badMetadata.stderr, /^error: --metadata must be object/)
    assert.equal(noFingerprint.code, 2)
  })

  it('says so when a license has none, and deactivates quietly with --json', async (t) => {
    const server = await startCliTestServer(t)
    const license = await aLicense(server, '1')
    const activated = await keyturn(
      ['activations', 'activate', license.id, '--fingerprint', 'a', '--json'],
      server.env,
    )

    const quiet = await keyturn(
      ['activations', 'deactivate', JSON.parse(activated.stdout).id, '--json'],
      server.env,
    )
    const none = await keyturn(['activations', 'list', license.id], server.env)

    assert.deepEqual([quiet.code, quiet.stdout], [0, ''])
    assert.equal(none.stdout, 'No activations.\n')
  })

  it('heartbeats a floating seat, and counts and resets the uses of a metered license', async (t) => {
    const server = await startCliTestServer(t)
    const created = await keyturn(
      [
        'licenses',
        'create',
        '--product',
        server.productId,
        '--heartbeat-ttl',
        '600',
        '--max-uses',
        '3',
        '--json',
      ],
      server.env,
    )
    const license: LicenseResource = JSON.parse(created.stdout)
    const activated = await keyturn(
      ['activations', 'activate', license.id, '--fingerprint', 'a', '--json'],
      server.env,
    )

    const beat = await keyturn(['activations', 'heartbeat', JSON.parse(activated.stdout).id], server.env)
    const used = await keyturn(['licenses', 'usage', license.id, '--increment', '3'], server.env)
    const refused = await keyturn(['licenses', 'usage', license.id], server.env)
    const reset = await keyturn(['licenses', 'reset-usage', license.id, '--json'], server.env)

    assert.deepEqual([license.heartbeatTtl, license.maxUses], [600, 3], created.stderr)
    assert.match(
      beat.stdout,
      /^Heartbeat of act_\w+: holds its seat until 2030-01-01T00:10:00\.000Z\.\n$/,
      beat.stderr,
    )
    assert.equal(used.stdout, `License ${license.id} has used 3 of 3.\n`, used.stderr)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /^usage_limit_reached: /)
    assert.equal((JSON.parse(reset.stdout) as LicenseResource).uses, 0)
  })
})
