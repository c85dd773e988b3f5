import assert from 'node:assert/strict'
import { generateKeyPairSync, sign } from 'node:crypto'
import { it } from 'node:test'
import { KeyturnClient, KeyturnSignatureError, type KeyturnSignatureErrorCode } from '@keyturn/client'
import { answerSignatureBase, answerSignatureParams } from '@keyturn/protocol'
import { createProduct, testAdminSecret } from '@keyturn/server/testing/build-test-app'
import { describeEachDatabase } from '@keyturn/server/testing/each-database'
import { createLicense } from '@keyturn/server/testing/licenses'
import { serveHttp, startTestServer } from '@keyturn/server/testing/listening-app'

async function signatureError(promise: Promise<unknown>, code: KeyturnSignatureErrorCode) {
  const error = await promise.then(
    (value) => assert.fail(`expected KeyturnSignatureError ${code}, resolved with ${JSON.stringify(value)}`),
    (error: unknown) => error,
  )
  assert.ok(error instanceof KeyturnSignatureError, `expected a KeyturnSignatureError, got ${String(error)}`)
  assert.equal(error.code, code, error.message)
}

describeEachDatabase('KeyturnClient with a product public key', (database) => {
  it('accepts signed answers for its own requests and detects every spoof', async (t) => {
    const { app, baseUrl, headers, productId, clock } = await startTestServer(t, database)
    const product = (await app.inject({ url: `/api/v0/products/${productId}`, headers })).json()
    const license = await createLicense(app, headers, { productId, maxActivations: 2 })
    const client = (options: Partial<ConstructorParameters<typeof KeyturnClient>[0]> = {}) =>
      new KeyturnClient({
        baseUrl,
        apiKey: testAdminSecret,
        publicKey: product.publicKey,
        now: () => clock.now(),
        ...options,
      })

    // The round trip: validate, activate and a token, each checked.
    const keyturn = client()
    assert.equal((await keyturn.validateLicense({ key: license.key, productId })).isValid, true)
    const activation = await keyturn.activateLicenseByKey({ key: license.key, productId, fingerprint: 'm-1' })
    assert.equal(activation.fingerprint, 'm-1')
    assert.ok((await keyturn.createLicenseTokenByKey({ key: license.key, productId })).token)
    // A JWK, or a list with a retired key, works as well.
    const otherKey = generateKeyPairSync('ed25519')
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString()
    const listed = client({ publicKey: [otherKey, product.publicKeyJwk] })
    assert.equal((await listed.validateLicense({ key: license.key, productId })).isValid, true)

    // A fake server that always says valid, unsigned.
    const fake = await serveHttp(t, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ isValid: true, reason: null }))
    })
    await signatureError(
      client({ baseUrl: fake }).validateLicense({ key: license.key, productId }),
      'unsigned',
    )

    // A fake server that signs with its own key under the product's key id.
    const forger = generateKeyPairSync('ed25519').privateKey
    const forged = await serveHttp(t, async (request, response) => {
      let raw = ''
      for await (const chunk of request) {
        raw += chunk
      }
      const body = JSON.stringify({ isValid: true, reason: null, nonce: JSON.parse(raw).nonce })
      const digest = `sha-256=:${Buffer.from(await crypto.subtle.digest('SHA-256', Buffer.from(body))).toString('base64')}:`
      const date = clock.now().toUTCString()
      const params = answerSignatureParams(Math.floor(clock.now().getTime() / 1000), product.keyId)
      const base = answerSignatureBase({
        status: 200,
        contentDigest: digest,
        date,
        method: 'POST',
        path: '/api/v0/licenses/validate',
        signatureParams: params,
      })
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-digest': digest,
        date,
        'signature-input': `keyturn=${params}`,
        signature: `keyturn=:${sign(null, Buffer.from(base), forger).toString('base64')}:`,
      })
      response.end(body)
    })
    await signatureError(
      client({ baseUrl: forged }).validateLicense({ key: license.key, productId }),
      'invalid_signature',
    )

    // A genuine answer replayed for a later request (which sent another nonce).
    let captured: { status: number; headers: Headers; body: ArrayBuffer } | undefined
    const replaying: typeof fetch = async (input, init) => {
      if (captured === undefined) {
        const response = await fetch(input, init)
        captured = { status: response.status, headers: response.headers, body: await response.arrayBuffer() }
      }
      return new Response(captured.body.slice(0), { status: captured.status, headers: captured.headers })
    }
    const replayed = client({ fetch: replaying })
    await replayed.validateLicense({ key: license.key, productId })
    await signatureError(replayed.validateLicense({ key: license.key, productId }), 'nonce_mismatch')

    // The body changed by one byte on the way.
    const tampering: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      const body = new Uint8Array(await response.arrayBuffer())
      const at = new TextDecoder().decode(body).indexOf('"timestamp":"') + '"timestamp":"'.length
      body[at] = '1'.charCodeAt(0) // 2030-… becomes 1030-…: one byte
      return new Response(body, { status: response.status, headers: response.headers })
    }
    await signatureError(
      client({ fetch: tampering }).validateLicense({ key: license.key, productId }),
      'digest_mismatch',
    )

    // An answer signed by another product's key (a valid license of another product).
    const otherProduct = await createProduct(app, headers, 'Other')
    const otherLicense = await createLicense(app, headers, { productId: otherProduct })
    await signatureError(
      keyturn.validateLicense({ key: otherLicense.key, productId: otherProduct }),
      'unknown_key',
    )

    // A stale answer: the server's clock (Date, created) is ten minutes behind this machine's.
    const late = client({ now: () => new Date(clock.now().getTime() + 10 * 60_000) })
    await signatureError(late.validateLicense({ key: license.key, productId }), 'stale')
    const tolerant = client({
      now: () => new Date(clock.now().getTime() + 10 * 60_000),
      signatureToleranceSeconds: 900,
    })
    assert.equal((await tolerant.validateLicense({ key: license.key, productId })).isValid, true)
  })
})
