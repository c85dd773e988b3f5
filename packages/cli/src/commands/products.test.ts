import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Paginated, ProductKeyResource, ProductResource } from '@keyturn/client'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

const at = '2030-01-01T00:00:00.000Z' // the test server's fixed clock

describe('keyturn products', () => {
  it('creates a product, confirming it or printing it as JSON', async (t) => {
    const server = await startCliTestServer(t)

    const [plain, json] = await Promise.all([
      keyturn(['products', 'create', '--name', 'Acme Photo Editor'], server.env),
      keyturn(['products', 'create', '--name', 'Acme Sound', '--json'], server.env),
    ])

    assert.equal(plain.code, 0, plain.stderr)
    assert.match(plain.stdout, /^Created product prd_\w+ \(Acme Photo Editor\)\.\n$/)
    const product: ProductResource = JSON.parse(json.stdout)
    assert.deepEqual([product.object, product.name, product.status], ['Product', 'Acme Sound', 'active'])
  })

  it('turns signed answers on at creation and off and on again with update', async (t) => {
    const server = await startCliTestServer(t)

    const created = await keyturn(
      ['products', 'create', '--name', 'Signed', '--sign-responses', '--json'],
      server.env,
    )
    assert.equal(created.code, 0, created.stderr)
    const product: ProductResource = JSON.parse(created.stdout)
    assert.equal(product.signResponses, true)
    const off = await keyturn(['products', 'update', product.id, '--no-sign-responses', '--json'], server.env)
    assert.equal(JSON.parse(off.stdout).signResponses, false, off.stderr)
    const shown = await keyturn(['products', 'get', product.id], server.env)
    assert.match(shown.stdout, /signed answers +when asked/)
    const on = await keyturn(['products', 'update', product.id, '--sign-responses', '--json'], server.env)
    assert.equal(JSON.parse(on.stdout).signResponses, true, on.stderr)
  })

  it('lists products as a table or as the JSON page, and every page with --all', async (t) => {
    const server = await startCliTestServer(t) // holds "Test Product"

    const [table, json, all] = await Promise.all([
      keyturn(['products', 'list'], server.env),
      keyturn(['products', 'list', '--json'], server.env),
      keyturn(['products', 'list', '--all', '--limit', '1', '--json'], server.env),
    ])

    assert.equal(
      table.stdout,
      `ID${' '.repeat(26)}NAME          STATUS  CREATED\n${server.productId}  Test Product  active  ${at}\n`,
    )
    const page: Paginated<ProductResource> = JSON.parse(json.stdout)
    assert.deepEqual(
      page.data.map((product) => product.id),
      [server.productId],
    )
    assert.deepEqual(
      (JSON.parse(all.stdout) as ProductResource[]).map((product) => product.id),
      [server.productId],
    )
  })

  it('shows a product with its public key, or as JSON', async (t) => {
    const server = await startCliTestServer(t)

    const [plain, json] = await Promise.all([
      keyturn(['products', 'get', server.productId], server.env),
      keyturn(['products', 'get', server.productId, '--json'], server.env),
    ])

    const product: ProductResource = JSON.parse(json.stdout)
    assert.equal(
      plain.stdout,
      [
        `id                ${server.productId}`,
        'name              Test Product',
        'status            active',
        'client token ttl  604800 s',
        'signed answers    when asked',
        `key id            ${product.keyId}`,
        `created           ${at}`,
        `updated           ${at}`,
        '',
        product.publicKey.trimEnd(),
        '',
      ].join('\n'),
    )
  })

  it('sets the longest token a client key obtains, and refuses a value out of bounds with exit 2', async (t) => {
    const server = await startCliTestServer(t)

    const created = await keyturn(
      ['products', 'create', '--name', 'Short', '--client-token-ttl', '3600', '--json'],
      server.env,
    )
    const updated = await keyturn(
      ['products', 'update', server.productId, '--client-token-ttl', '86400', '--json'],
      server.env,
    )
    const tooShort = await keyturn(
      ['products', 'update', server.productId, '--client-token-ttl', '60'],
      server.env,
    )

    assert.equal(created.code, 0, created.stderr)
    assert.equal((JSON.parse(created.stdout) as ProductResource).clientTokenTtl, 3600)
    assert.equal(updated.code, 0, updated.stderr)
    assert.equal((JSON.parse(updated.stdout) as ProductResource).clientTokenTtl, 86400)
    assert.deepEqual([tooShort.code, tooShort.stderr], [2, 'error: --client-token-ttl must be >= 3600\n'])
  })

  it('renames, suspends and resumes a product', async (t) => {
    const server = await startCliTestServer(t)
    const id = server.productId

    const rename = await keyturn(['products', 'update', id, '--name', 'Renamed'], server.env)
    const suspend = await keyturn(['products', 'suspend', id], server.env)
    const suspendedJson = await keyturn(['products', 'suspend', id, '--json'], server.env)
    const resume = await keyturn(['products', 'resume', id], server.env)
    const resumedJson = await keyturn(['products', 'resume', id, '--json'], server.env)
    const renamedJson = await keyturn(['products', 'update', id, '--name', 'Again', '--json'], server.env)

    assert.deepEqual(
      [rename.stdout, suspend.stdout, resume.stdout],
      [`Updated product ${id} (Renamed).\n`, `Suspended product ${id}.\n`, `Resumed product ${id}.\n`],
    )
    assert.equal(JSON.parse(suspendedJson.stdout).status, 'suspended')
    assert.equal(JSON.parse(resumedJson.stdout).status, 'active')
    assert.equal(JSON.parse(renamedJson.stdout).name, 'Again')
  })

  it('lists signing keys and rotates them', async (t) => {
    const server = await startCliTestServer(t)
    const id = server.productId

    const rotate = await keyturn(['products', 'rotate-key', id], server.env)
    const rotateJson = await keyturn(['products', 'rotate-key', id, '--json'], server.env)
    const [keys, keysJson] = await Promise.all([
      keyturn(['products', 'keys', id], server.env),
      keyturn(['products', 'keys', id, '--json'], server.env),
    ])

    const current: ProductKeyResource = JSON.parse(rotateJson.stdout)
    assert.match(
      rotate.stdout,
      new RegExp(`^Rotated the signing key of ${id}: the current key is now \\S+\\.\\n$`),
    )
    const page: Paginated<ProductKeyResource> = JSON.parse(keysJson.stdout)
    assert.equal(page.data.length, 3)
    assert.equal(page.data[0]?.keyId, current.keyId)
    const lines = keys.stdout.trimEnd().split('\n')
    assert.match(lines[0] ?? '', /^KEY ID +CURRENT +CREATED +RETIRED$/)
    assert.match(lines[1] ?? '', new RegExp(`^${current.keyId} +yes +${at} +-$`))
    assert.equal(lines.length, 4)
  })

  it('exits 1 with product_not_found, 1 with forbidden for a product key creating one, 2 without --name', async (t) => {
    const server = await startCliTestServer(t)
    const created = await keyturn(
      ['api-keys', 'create', '--name', 'app', '--role', 'product', '--product', server.productId, '--json'],
      server.env,
    )
    const productKey = JSON.parse(created.stdout).secret

    const [unknown, forbidden, noName] = await Promise.all([
      keyturn(['products', 'get', 'prd_unknown'], server.env),
      keyturn(['products', 'create', '--name', 'Mine'], { ...server.env, KEYTURN_API_KEY: productKey }),
      keyturn(['products', 'create'], server.env),
    ])

    assert.equal(unknown.code, 1)
    assert.match(unknown.stderr, /^product_not_found: .+ \(req_\w+\)\n$/)
    assert.equal(forbidden.code, 1)
    assert.match(forbidden.stderr, /^forbidden: /)
    assert.equal(noName.code, 2)
    assert.match(noName.stderr, /required option '--name <name>'/)
  })
})
