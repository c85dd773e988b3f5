import assert from 'node:assert/strict'
import { createHash, createPublicKey, sign, verify } from 'node:crypto'
import { it } from 'node:test'
import { deriveSecretKeys } from '../../core/secrets.js'
import { buildTestApp, productKeyHeaders, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { assertProblem } from '../../testing/problems.js'
import { decryptSigningKey } from '../../tokens/signing-keys.js'

/** buildTestApp's master secret: the signing keys of its products are encrypted under it. */
const testMasterSecret = 'test-master-secret-with-at-least-32-characters'

/** RFC 7638 thumbprint of an Ed25519 JWK, computed here independently of the server's code. */
function thumbprint(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url')
}

describeEachDatabase('POST /api/v0/products', (database) => {
  it('creates an active product with its own Ed25519 public key as PEM and JWK', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers,
      payload: { name: 'Acme Photo Editor' },
    })

    assert.equal(res.statusCode, 201, res.body)
    const { id, publicKey, publicKeyJwk, keyId, ...rest } = res.json()
    assert.match(id, /^prd_[0-9A-Za-z]{22}$/)
    assert.deepEqual(rest, {
      object: 'Product',
      name: 'Acme Photo Editor',
      status: 'active',
      clientTokenTtl: 604800,
      signResponses: false,
      branding: {
        displayName: null,
        logoUrl: null,
        accentColor: null,
        supportEmail: null,
        supportUrl: null,
        portalUrl: null,
      },
      metadata: {},
      createdAt: testStart,
      updatedAt: testStart,
    })
    assert.match(publicKey, /^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/)
    const key = createPublicKey(publicKey)
    assert.equal(key.asymmetricKeyType, 'ed25519')
    assert.equal(key.export({ type: 'spki', format: 'pem' }), publicKey)
    const { x } = key.export({ format: 'jwk' })
    assert.equal(typeof x, 'string')
    assert.deepEqual(publicKeyJwk, { kty: 'OKP', crv: 'Ed25519', x, kid: keyId, alg: 'EdDSA', use: 'sig' })
    assert.equal(keyId, thumbprint(String(x)))
    const fromJwk = createPublicKey({ key: publicKeyJwk, format: 'jwk' })
    assert.equal(fromJwk.export({ type: 'spki', format: 'pem' }), publicKey)
  })

  it('gives each product its own key pair', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const created = []
    for (const name of ['One', 'Two']) {
      const res = await app.inject({ method: 'POST', url: '/api/v0/products', headers, payload: { name } })
      assert.equal(res.statusCode, 201, res.body)
      created.push(res.json())
    }

    const [one, two] = created
    assert.notEqual(one.id, two.id)
    assert.notEqual(one.publicKey, two.publicKey)
    assert.notEqual(one.keyId, two.keyId)
  })

  it('stores the private key only encrypted, under the server secret, as the pair of the public key', async (t) => {
    const { app, headers, connection } = await buildTestApp(t, database)
    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers,
      payload: { name: 'Acme' },
    })
    assert.equal(res.statusCode, 201, res.body)
    const product = res.json()

    const rows = await connection.db
      .selectFrom('product_keys')
      .select(['id', 'public_key_pem', 'private_key_encrypted'])
      .where('product_id', '=', product.id)
      .execute()

    assert.equal(rows.length, 1)
    const [row] = rows
    assert.ok(row)
    assert.equal(row.id, product.keyId)
    assert.equal(row.public_key_pem, product.publicKey)
    const stored = row.private_key_encrypted
    assert.doesNotMatch(stored, /PRIVATE KEY/)

    const privateKey = decryptSigningKey(deriveSecretKeys(testMasterSecret).signingKeyEncryption, {
      privateKeyEncrypted: stored,
    })
    assert.equal(privateKey.asymmetricKeyType, 'ed25519')
    const der = privateKey.export({ type: 'pkcs8', format: 'der' })
    const seed = der.subarray(der.length - 32) // PKCS#8 for Ed25519 ends with the 32-byte seed
    const storedBytes = Buffer.from(stored, 'base64url')
    for (const secret of [der, seed]) {
      assert.equal(storedBytes.indexOf(secret), -1)
      for (const encoding of ['base64', 'base64url', 'hex'] as const) {
        assert.ok(!stored.includes(secret.toString(encoding)), `the stored key contains its ${encoding}`)
      }
    }

    const message = Buffer.from('a license token')
    assert.ok(verify(null, message, createPublicKey(product.publicKey), sign(null, message, privateKey)))

    assert.throws(() =>
      decryptSigningKey(deriveSecretKeys('another-master-secret-of-at-least-32-chars').signingKeyEncryption, {
        privateKeyEncrypted: stored,
      }),
    )
  })

  it('accepts a name of 1 and of 200 characters', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const name of ['A', 'x'.repeat(200), 'Ünïcödé ✓ 製品']) {
      const res = await app.inject({ method: 'POST', url: '/api/v0/products', headers, payload: { name } })

      assert.equal(res.statusCode, 201, res.body)
      assert.equal(res.json().name, name)
    }
  })

  it('answers 400 validation_failed at #/name for an empty, blank, too long or missing name', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const payload of [{ name: '' }, { name: '   ' }, { name: '\t\n ' }, { name: 'x'.repeat(201) }, {}]) {
      const res = await app.inject({ method: 'POST', url: '/api/v0/products', headers, payload })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        ['#/name'],
        res.body,
      )
    }
  })

  it('answers 400 validation_failed for an unknown field such as status or publicKey', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const extra of [{ status: 'suspended' }, { publicKey: 'mine' }, { id: 'prd_chosen' }]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/products',
        headers,
        payload: { name: 'Acme', ...extra },
      })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        [`#/${Object.keys(extra)[0]}`],
      )
    }
  })

  it('answers 403 forbidden when a product key creates a product', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const productKey = await productKeyHeaders(app, headers, productId)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers: productKey,
      payload: { name: 'Mine' },
    })

    assertProblem(res, 403, 'forbidden')
    const list = await app.inject({ method: 'GET', url: '/api/v0/products', headers })
    assert.equal(list.json().totalCount, 1, 'no product was created')
  })

  it('is served under /v0 as well', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'POST', url: '/v0/products', headers, payload: { name: 'Acme' } })

    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().object, 'Product')
  })
})
