import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import type { LicenseTokenResource, ProductResource } from '@keyturn/client'
import { keyturn } from '../testing/keyturn-in-process.js'
import { startCliTestServer } from '../testing/test-server.js'

/** A token from a real server, and its product's public key as files; the server is closed after. */
async function aToken(t: TestContext, ...flags: string[]) {
  const server = await startCliTestServer(t)
  // Offline validation judges expiry at the real time: issue the token at the real time too.
  server.clock.set(new Date().toISOString())
  const license = await keyturn(['licenses', 'create', '--product', server.productId, '--json'], server.env)
  const issued = await keyturn(
    ['licenses', 'token', JSON.parse(license.stdout).id, ...flags, '--json'],
    server.env,
  )
  const product = await keyturn(['products', 'get', server.productId, '--json'], server.env)
  const { publicKey, publicKeyJwk }: ProductResource = JSON.parse(product.stdout)
  const dir = mkdtempSync(join(tmpdir(), 'keyturn-token-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const pem = join(dir, 'product.pem')
  const jwk = join(dir, 'product.jwk')
  writeFileSync(pem, publicKey)
  writeFileSync(jwk, JSON.stringify({ keys: [publicKeyJwk] }))
  const token: LicenseTokenResource = JSON.parse(issued.stdout)
  return { token, productId: server.productId, pem, jwk, dir }
}

describe('keyturn token verify', () => {
  it('exits 0 and shows the license for a valid token, offline (no server address given)', async (t) => {
    const { token, productId, pem, jwk } = await aToken(t, '--custom-payload', '{"plan":"pro"}')

    const [plain, json] = await Promise.all([
      keyturn(['token', 'verify', token.token, '--product', productId, '--public-key', pem]),
      keyturn(['token', 'verify', token.token, '--product', productId, '--jwk', jwk, '--json']),
    ])

    assert.equal(plain.code, 0, plain.stderr)
    assert.equal(
      plain.stdout,
      [
        'valid',
        '',
        `license        ${token.payload.licenseId}`,
        `product        ${productId}`,
        `expires        ${token.payload.expirationDate}`,
        `issued         ${token.payload.createdAt}`,
        'fingerprint    -',
        'entitlements   -',
        'custom fields  {"plan":"pro"}',
        '',
      ].join('\n'),
    )
    assert.deepEqual(JSON.parse(json.stdout), {
      licenseId: token.payload.licenseId,
      expiresAt: token.payload.expirationDate,
      productId,
      customFields: { plan: 'pro' },
      issuedAt: token.payload.createdAt,
      entitlements: [],
    })
  })

  it('exits 1 with the reason for a tampered token, another product or a machine it is not bound to', async (t) => {
    const { token, productId, pem } = await aToken(t)
    const [header, payload, signature] = token.token.split('.')
    const tampered = `${header}.${payload}.${signature?.startsWith('A') ? 'B' : 'A'}${signature?.slice(1)}`

    const [bad, other, machine] = await Promise.all([
      keyturn(['token', 'verify', tampered, '--product', productId, '--public-key', pem]),
      keyturn(['token', 'verify', token.token, '--product', 'prd_other', '--public-key', pem]),
      keyturn([
        'token',
        'verify',
        token.token,
        '--product',
        productId,
        '--public-key',
        pem,
        '--fingerprint',
        'm',
      ]),
    ])

    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /^invalid_signature: /)
    assert.equal(bad.stdout, '')
    assert.equal(other.code, 1)
    assert.match(other.stderr, /^product_mismatch: /)
    assert.equal(machine.code, 1)
    assert.match(machine.stderr, /^fingerprint_mismatch: /)
  })

  it('exits 2 without a public key, with two, or with a file it cannot read', async (t) => {
    const { token, productId, pem, jwk, dir } = await aToken(t)
    const verify = (...flags: string[]) =>
      keyturn(['token', 'verify', token.token, '--product', productId, ...flags])

    const [none, both, missing] = await Promise.all([
      verify(),
      verify('--public-key', pem, '--jwk', jwk),
      verify('--public-key', join(dir, 'missing.pem')),
    ])

    for (const run of [none, both]) {
      assert.deepEqual(
        [run.code, run.stderr],
        [2, 'error: give the product public key with either --public-key FILE or --jwk FILE\n'],
      )
    }
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /^error: cannot read .*missing\.pem/)
  })
})
