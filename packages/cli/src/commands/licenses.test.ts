import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LicenseResource, Paginated } from '@keyturn/client'
import { endOfDayUtc } from '@keyturn/protocol'
import { closedPortUrl } from '@keyturn/server/testing/listening-app'
import { keyturn } from '../testing/keyturn-in-process.js'
import { type CliTestServer, licenseCount, startCliTestServer } from '../testing/test-server.js'

const at = '2030-01-01T00:00:00.000Z' // the test server's fixed clock

async function createLicense(server: CliTestServer, ...flags: string[]): Promise<LicenseResource> {
  const run = await keyturn(
    ['licenses', 'create', '--product', server.productId, ...flags, '--json'],
    server.env,
  )
  assert.equal(run.code, 0, run.stderr)
  return JSON.parse(run.stdout)
}

describe('keyturn licenses create', () => {
  it('prints a confirmation with the id and key, and exits 0', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(['licenses', 'create', '--product', server.productId], server.env)

    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^Created license lic_\w+ with key [0-9A-Z]{5}(-[0-9A-Z]{5}){4}\.\n$/)
    assert.equal(run.stderr, '')
  })

  it("prints the API's JSON with --json; unlimited and never become null", async (t) => {
    const server = await startCliTestServer(t)

    const license = await createLicense(
      server,
      '--max-activations',
      'unlimited',
      '--expiration-date',
      'never',
    )

    assert.equal(license.maxActivations, null)
    assert.equal(license.expirationDate, null)
    assert.equal(license.createdAt, at)
  })

  it('takes a plain date for --expiration-date as the end of that day in UTC, as the dashboard does, and ISO 8601 as given', async (t) => {
    const server = await startCliTestServer(t)

    const plain = await createLicense(server, '--expiration-date', '2031-01-01')
    const iso = await createLicense(server, '--expiration-date', '2031-01-01T12:30:00+02:00')

    assert.equal(plain.expirationDate, '2031-01-01T23:59:59.999Z')
    assert.equal(plain.expirationDate, endOfDayUtc('2031-01-01'), 'the shared rule')
    assert.equal(iso.expirationDate, '2031-01-01T10:30:00.000Z')
  })

  it('exits 2 for a plain date that is no day (2031-02-30), and sends nothing', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(
      ['licenses', 'create', '--product', server.productId, '--expiration-date', '2031-02-30'],
      server.env,
    )

    assert.equal(run.code, 2)
    assert.equal(run.stderr, 'error: --expiration-date must match format "date-time" or "never"\n')
    assert.equal(await licenseCount(server), 0)
  })

  it('exits 2 naming the flag when a value breaks the schema, and sends nothing', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(
      [
        'licenses',
        'create',
        '--product',
        server.productId,
        '--max-activations',
        '0',
        '--expiration-date',
        'soon',
      ],
      server.env,
    )

    assert.equal(run.code, 2)
    assert.equal(
      run.stderr,
      'error: --max-activations must be >= 1 or "unlimited"; --expiration-date must match format "date-time" or "never"\n',
    )
    assert.equal(run.stdout, '')
    assert.equal(await licenseCount(server), 0)
  })

  it('exits 2 when a required flag is missing', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(['licenses', 'create'], server.env)

    assert.equal(run.code, 2)
    assert.match(run.stderr, /required option '--product <id>' not specified/)
  })

  it('exits 1 with code: detail (requestId) on stderr when the API refuses', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(['licenses', 'create', '--product', 'prd_unknown'], server.env)

    assert.equal(run.code, 1)
    assert.match(run.stderr, /^product_not_found: .+ \(req_\w{22}\)\n$/)
    assert.equal(run.stdout, '')
  })

  it('exits 3 when the server cannot be reached', async (t) => {
    const server = await startCliTestServer(t)
    const url = await closedPortUrl()

    const run = await keyturn(['licenses', 'create', '--product', server.productId], {
      ...server.env,
      KEYTURN_URL: url,
    })

    assert.equal(run.code, 3)
    assert.equal(run.stderr, `cannot reach the server: Cannot reach the Keyturn server at ${url}\n`)
  })

  it('takes --url and --api-key over the environment, and exits 2 with neither an API key nor its variable', async (t) => {
    const server = await startCliTestServer(t)
    const flags = ['--url', server.baseUrl, '--api-key', server.env.KEYTURN_API_KEY ?? '']

    const withFlags = await keyturn(['licenses', 'create', '--product', server.productId, ...flags], {
      KEYTURN_URL: await closedPortUrl(),
      KEYTURN_API_KEY: 'kt_admin_wrong',
    })
    const withNothing = await keyturn(['licenses', 'create', '--product', server.productId])

    assert.equal(withFlags.code, 0, withFlags.stderr)
    assert.equal(withNothing.code, 2)
    assert.equal(withNothing.stderr, 'error: no API key: pass --api-key or set KEYTURN_API_KEY\n')
  })
})

describe('keyturn licenses list', () => {
  it('prints an aligned table and where the next page is, or the page as JSON', async (t) => {
    const server = await startCliTestServer(t)
    const first = await createLicense(
      server,
      '--max-activations',
      '2',
      '--expiration-date',
      '2031-01-01T00:00:00Z',
    )
    await createLicense(server, '--max-activations', 'unlimited')

    const table = await keyturn(
      ['licenses', 'list', '--sort', 'maxActivations:asc', '--limit', '1'],
      server.env,
    )
    const json = await keyturn(['licenses', 'list', '--limit', '1', '--page', '1', '--json'], server.env)

    assert.equal(table.code, 0, table.stderr)
    const lines = table.stdout.split('\n')
    assert.match(lines[0] ?? '', /^ID +KEY +STATUS +MAX +USED +EXPIRES +PRODUCT$/)
    assert.equal(
      lines[1],
      `${first.id}  ${first.key}  active  2    0     2031-01-01T00:00:00.000Z  ${server.productId}`,
    )
    assert.equal(lines[0]?.indexOf('KEY'), lines[1]?.indexOf(first.key), 'columns are aligned')
    assert.equal(
      lines[3],
      'Page 0 of pages 0 to 1: 1 of 2 licenses. Next: --page 1, or --all for every page.',
    )
    const page: Paginated<LicenseResource> = JSON.parse(json.stdout)
    assert.equal(json.code, 0, json.stderr)
    assert.deepEqual([page.totalCount, page.page, page.limit, page.data.length], [2, 1, 1, 1])
  })

  it('walks every page with --all, filtered by --product and --filter', async (t) => {
    const server = await startCliTestServer(t)
    for (let n = 0; n < 5; n++) {
      await createLicense(server)
    }
    const revoked = await createLicense(server)
    await keyturn(['licenses', 'revoke', revoked.id], server.env)

    const all = await keyturn(
      [
        'licenses',
        'list',
        '--product',
        server.productId,
        '--filter',
        'status:eq:active',
        '--limit',
        '2',
        '--all',
        '--json',
      ],
      server.env,
    )
    const table = await keyturn(['licenses', 'list', '--limit', '2', '--all'], server.env)

    assert.equal(all.code, 0, all.stderr)
    const items: LicenseResource[] = JSON.parse(all.stdout)
    assert.equal(items.length, 5)
    assert.equal(new Set(items.map((item) => item.id)).size, 5)
    assert.ok(items.every((item) => item.status === 'active'))
    assert.equal(table.stdout.trimEnd().split('\n').length, 7, 'a header and six rows, no footer')
  })

  it('exits 2 for --all with --page, and 1 with invalid_filter for a filter the API refuses', async (t) => {
    const server = await startCliTestServer(t)

    const both = await keyturn(['licenses', 'list', '--all', '--page', '1'], server.env)
    const badFilter = await keyturn(['licenses', 'list', '--filter', 'colour:eq:red'], server.env)
    const badLimit = await keyturn(['licenses', 'list', '--limit', 'many'], server.env)

    assert.deepEqual([both.code, both.stderr], [2, 'error: --all walks every page: leave out --page\n'])
    assert.equal(badFilter.code, 1)
    assert.match(badFilter.stderr, /^invalid_filter: .*colour.* \(req_\w+\)\n$/)
    assert.deepEqual([badLimit.code, badLimit.stderr], [2, 'error: --limit must be integer\n'])
  })

  it('says so when there are none', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(['licenses', 'list'], server.env)

    assert.deepEqual([run.code, run.stdout], [0, 'No licenses.\n'])
  })
})

describe('keyturn licenses get, update, revoke, reinstate', () => {
  it('shows a license as aligned fields, or as JSON', async (t) => {
    const server = await startCliTestServer(t)
    const license = await createLicense(server, '--max-activations', '3')

    const fields = await keyturn(['licenses', 'get', license.id], server.env)
    const json = await keyturn(['licenses', 'get', license.id, '--json'], server.env)

    assert.equal(
      fields.stdout,
      [
        `id               ${license.id}`,
        `key              ${license.key}`,
        'status           active',
        `product          ${server.productId}`,
        'max activations  3',
        'activations      0',
        'heartbeat TTL    none',
        'uses             0 (unmetered)',
        'expires          never',
        'customer         none',
        'policy           none',
        'entitlements     -',
        'metadata         {}',
        `created          ${at}`,
        `updated          ${at}`,
        '',
      ].join('\n'),
    )
    assert.deepEqual(JSON.parse(json.stdout), license)
  })

  it('updates, revokes and reinstates, confirming each, or printing the license as JSON', async (t) => {
    const server = await startCliTestServer(t)
    const license = await createLicense(server)

    const update = await keyturn(
      ['licenses', 'update', license.id, '--max-activations', '5', '--expiration-date', '2032-01-01'],
      server.env,
    )
    const revoke = await keyturn(['licenses', 'revoke', license.id], server.env)
    const revokeJson = await keyturn(['licenses', 'revoke', license.id, '--json'], server.env)
    const reinstate = await keyturn(['licenses', 'reinstate', license.id], server.env)
    const reinstateJson = await keyturn(['licenses', 'reinstate', license.id, '--json'], server.env)
    const updateJson = await keyturn(
      ['licenses', 'update', license.id, '--max-activations', 'unlimited', '--json'],
      server.env,
    )

    assert.deepEqual(
      [update.stdout, revoke.stdout, reinstate.stdout],
      [
        `Updated license ${license.id}.\n`,
        `Revoked license ${license.id}.\n`,
        `Reinstated license ${license.id}: it is active.\n`,
      ],
    )
    assert.equal(JSON.parse(revokeJson.stdout).status, 'revoked')
    assert.equal(JSON.parse(reinstateJson.stdout).status, 'active')
    assert.deepEqual(
      [JSON.parse(updateJson.stdout).maxActivations, JSON.parse(updateJson.stdout).expirationDate],
      [null, '2032-01-01T23:59:59.999Z'],
    )
  })

  it('exits 1 with license_not_found for an unknown id', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(['licenses', 'get', 'lic_unknown'], server.env)

    assert.equal(run.code, 1)
    assert.match(run.stderr, /^license_not_found: /)
  })
})

describe('keyturn licenses validate', () => {
  it('exits 0 for a valid key and 1 for a revoked one, saying why', async (t) => {
    const server = await startCliTestServer(t)
    const license = await createLicense(server)
    const validate = (...flags: string[]) =>
      keyturn(['licenses', 'validate', license.key, '--product', server.productId, ...flags], server.env)

    const valid = await validate()
    await keyturn(['licenses', 'revoke', license.id], server.env)
    const revoked = await validate()
    const revokedJson = await validate('--json')

    assert.equal(valid.code, 0, valid.stderr)
    assert.match(valid.stdout, /^valid\n\nid +lic_/)
    assert.equal(revoked.code, 1)
    assert.match(revoked.stdout, /^not valid: revoked\n/)
    assert.equal(revokedJson.code, 1)
    assert.deepEqual(
      [JSON.parse(revokedJson.stdout).isValid, JSON.parse(revokedJson.stdout).reason],
      [false, 'revoked'],
    )
  })

  it('exits 1 with license_not_found for an unknown key', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(
      ['licenses', 'validate', '00000-00000-00000-00000-00000', '--product', server.productId],
      server.env,
    )

    assert.equal(run.code, 1)
    assert.match(run.stderr, /^license_not_found: /)
  })
})

describe('keyturn licenses token', () => {
  it('prints only the token, or with --json the token, its payload and the license', async (t) => {
    const server = await startCliTestServer(t)
    const license = await createLicense(server)

    const plain = await keyturn(['licenses', 'token', license.id, '--ttl', '3600'], server.env)
    const json = await keyturn(
      ['licenses', 'token', license.id, '--custom-payload', '{"plan":"pro"}', '--json'],
      server.env,
    )

    assert.equal(plain.code, 0, plain.stderr)
    assert.match(plain.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/)
    const token = JSON.parse(json.stdout)
    assert.deepEqual(token.payload.customFields, { plan: 'pro' })
    assert.equal(token.license.id, license.id)
  })

  it('exits 2 when --custom-payload is not JSON, and 1 with license_not_active for a revoked license', async (t) => {
    const server = await startCliTestServer(t)
    const license = await createLicense(server)

    const notJson = await keyturn(['licenses', 'token', license.id, '--custom-payload', '{plan}'], server.env)
    await keyturn(['licenses', 'revoke', license.id], server.env)
    const revoked = await keyturn(['licenses', 'token', license.id], server.env)

    assert.equal(notJson.code, 2)
    assert.match(notJson.stderr, /^error: --custom-payload must be JSON/)
    assert.equal(revoked.code, 1)
    assert.match(revoked.stderr, /^license_not_active: /)
  })
})
