import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ApiKeyResource, CreatedApiKeyResource, Paginated } from '@keyturn/client'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

describe('keyturn api-keys', () => {
  it('creates a key and shows its secret once; the secret works', async (t) => {
    const server = await startCliTestServer(t)

    const plain = await keyturn(
      [
        'api-keys',
        'create',
        '--name',
        'Photo Editor back end',
        '--role',
        'product',
        '--product',
        server.productId,
      ],
      server.env,
    )

    assert.equal(plain.code, 0, plain.stderr)
    const [, id, secret] =
      /^Created API key (key_\w+) \(product, prd_\w+\)\. .*once:\n\n {2}(kt_prod_\w+)\n$/.exec(
        plain.stdout,
      ) ?? []
    assert.ok(id !== undefined && secret !== undefined, plain.stdout)
    const asProduct = await keyturn(['licenses', 'list'], { ...server.env, KEYTURN_API_KEY: secret })
    assert.equal(asProduct.code, 0, asProduct.stderr)
  })

  it('prints the created key with its secret as JSON', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(
      ['api-keys', 'create', '--name', 'ops', '--role', 'admin', '--json'],
      server.env,
    )

    const key: CreatedApiKeyResource = JSON.parse(run.stdout)
    assert.deepEqual([key.object, key.name, key.role, key.productId], ['ApiKey', 'ops', 'admin', null])
    assert.match(key.secret, /^kt_admin_/)
  })

  it('lists, shows and deletes keys', async (t) => {
    const server = await startCliTestServer(t)
    const created = await keyturn(
      ['api-keys', 'create', '--name', 'temp', '--role', 'admin', '--json'],
      server.env,
    )
    const { id } = JSON.parse(created.stdout) as CreatedApiKeyResource

    const [table, json, shown, shownJson] = await Promise.all([
      keyturn(['api-keys', 'list', '--sort', 'name:asc'], server.env),
      keyturn(['api-keys', 'list', '--json'], server.env),
      keyturn(['api-keys', 'get', id], server.env),
      keyturn(['api-keys', 'get', id, '--json'], server.env),
    ])
    const deleted = await keyturn(['api-keys', 'delete', id], server.env)
    const again = await keyturn(['api-keys', 'delete', id, '--json'], server.env)

    assert.match(table.stdout, /^ID +NAME +ROLE +PRODUCT +PREFIX +CREATED\n/)
    assert.equal(table.stdout.trimEnd().split('\n').length, 3, 'the bootstrap admin key and the new one')
    assert.equal((JSON.parse(json.stdout) as Paginated<ApiKeyResource>).totalCount, 2)
    assert.match(shown.stdout, new RegExp(`^id +${id}\nname +temp\nrole +admin\nproduct +-\n`))
    assert.equal(JSON.parse(shownJson.stdout).id, id)
    assert.deepEqual([deleted.code, deleted.stdout], [0, `Deleted API key ${id}.\n`])
    assert.equal(again.code, 1)
    assert.match(again.stderr, /^api_key_not_found: /)
  })

  it('deletes quietly with --json (the API answers 204 without a body)', async (t) => {
    const server = await startCliTestServer(t)
    const created = await keyturn(
      ['api-keys', 'create', '--name', 'temp', '--role', 'admin', '--json'],
      server.env,
    )

    const run = await keyturn(['api-keys', 'delete', JSON.parse(created.stdout).id, '--json'], server.env)

    assert.deepEqual([run.code, run.stdout, run.stderr], [0, '', ''])
  })

  it('exits 2 for a role the schema does not know, before any request', async (t) => {
    const server = await startCliTestServer(t)

    const run = await keyturn(['api-keys', 'create', '--name', 'x', '--role', 'root'], server.env)

    assert.equal(run.code, 2)
    assert.match(run.stderr, /^error: --role must be one of admin, product/)
  })
})
