import assert from 'node:assert/strict'
import { createHash, createPublicKey, verify } from 'node:crypto'
import { it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense, expectProblem } from '../../testing/licenses.js'

/**
 * An independent check of a signed answer, written from the text of RFC 9421 (§2.1 and §2.2 for the
 * component lines, §2.4 for `;req`, §2.5 for the base) and RFC 9530, not from protocol/: Ed25519
 * over the signature base, verified with node:crypto.
 */
function verifyByHand(res: LightMyRequestResponse, method: string, path: string, publicKeyPem: string) {
  const input = String(res.headers['signature-input'])
  const signature = String(res.headers.signature)
  const digest = String(res.headers['content-digest'])
  const params = /^keyturn=(.*)$/.exec(input)?.[1]
  assert.ok(params !== undefined, input)
  assert.match(
    params,
    /^\("@status" "content-digest" "date" "@method";req "@path";req\);created=\d+;keyid="[^"]+";alg="ed25519"$/,
  )
  const expectedDigest = `sha-256=:${createHash('sha256').update(res.rawPayload).digest('base64')}:`
  assert.equal(digest, expectedDigest)
  const base =
    `"@status": ${res.statusCode}\n` +
    `"content-digest": ${digest}\n` +
    `"date": ${res.headers.date}\n` +
    `"@method";req: ${method}\n` +
    `"@path";req: ${path}\n` +
    `"@signature-params": ${params}`
  const bytes = Buffer.from(/^keyturn=:([A-Za-z0-9+/=]+):$/.exec(signature)?.[1] ?? '', 'base64')
  return verify(null, Buffer.from(base), createPublicKey(publicKeyPem), bytes)
}

describeEachDatabase('signed answers', (database) => {
  it('echoes the nonce and signs validate, activate and tokens by key with the product key when Keyturn-Sign asks', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const product = (await app.inject({ url: `/api/v0/products/${productId}`, headers })).json()
    const license = await createLicense(app, headers, { productId, maxActivations: 2 })
    const calls = [
      { url: '/api/v0/licenses/validate', body: { key: license.key, productId }, status: 200 },
      {
        url: '/api/v0/licenses/activate',
        body: { key: license.key, productId, fingerprint: 'm-1' },
        status: 201,
      },
      { url: '/api/v0/licenses/tokens', body: { key: license.key, productId }, status: 201 },
      { url: '/v0/licenses/validate', body: { key: license.key, productId }, status: 200 },
    ]
    for (const [index, call] of calls.entries()) {
      const nonce = `nonce-${index}`
      const res = await app.inject({
        method: 'POST',
        url: call.url,
        headers: { ...headers, 'keyturn-sign': 'ed25519' },
        payload: { ...call.body, nonce },
      })
      assert.equal(res.statusCode, call.status, res.body)
      assert.equal(res.json().nonce, nonce, call.url)
      assert.equal(res.headers.date, new Date(testStart).toUTCString())
      assert.match(
        String(res.headers['signature-input']),
        new RegExp(`created=${Date.parse(testStart) / 1000};`),
      )
      assert.match(String(res.headers['signature-input']), new RegExp(`keyid="${product.keyId}"`))
      assert.ok(verifyByHand(res, 'POST', call.url, product.publicKey), call.url)
      // One byte changed and the signature no longer holds.
      const tampered = { ...res, rawPayload: Buffer.from(res.body.replace(nonce, `${nonce}x`)) }
      assert.throws(() =>
        verifyByHand(tampered as LightMyRequestResponse, 'POST', call.url, product.publicKey),
      )
    }
    // After a rotation the new current key signs.
    clock.advance(1000)
    const rotated = (
      await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/keys/rotate`, headers })
    ).json()
    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers: { ...headers, 'keyturn-sign': 'ed25519' },
      payload: { key: license.key, productId },
    })
    assert.ok(verifyByHand(res, 'POST', '/api/v0/licenses/validate', rotated.publicKey))
    assert.equal(res.json().nonce, undefined)
  })

  it('signs every application-facing answer of a product with signResponses, asked or not', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await createLicense(app, headers, { productId })
    const validate = () =>
      app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers,
        payload: { key: license.key, productId },
      })
    const unsigned = await validate()
    assert.equal(unsigned.headers.signature, undefined)
    assert.equal(unsigned.headers['content-digest'], undefined)

    const updated = await app.inject({
      method: 'PATCH',
      url: `/api/v0/products/${productId}`,
      headers,
      payload: { signResponses: true },
    })
    assert.equal(updated.statusCode, 200, updated.body)
    assert.equal(updated.json().signResponses, true)
    const signed = await validate()
    assert.ok(verifyByHand(signed, 'POST', '/api/v0/licenses/validate', updated.json().publicKey))
    // Management answers are never signed.
    const listed = await app.inject({ url: '/api/v0/licenses', headers: { ...headers } })
    assert.equal(listed.headers.signature, undefined)
  })

  it('refuses another signature algorithm and a nonce over 128 characters with 400 validation_failed', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await createLicense(app, headers, { productId })
    const rsa = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers: { ...headers, 'keyturn-sign': 'rsa' },
      payload: { key: license.key, productId },
    })
    expectProblem(rsa, 400, 'validation_failed')
    const long = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers,
      payload: { key: license.key, productId, nonce: 'n'.repeat(129) },
    })
    const problem = expectProblem(long, 400, 'validation_failed')
    assert.equal(problem.errors?.[0]?.pointer, '#/nonce')
  })

  it('creates a product with signResponses and shows it', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers,
      payload: { name: 'Signed', signResponses: true },
    })
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(res.json().signResponses, true)
    const got = await app.inject({ url: `/api/v0/products/${res.json().id}`, headers })
    assert.equal(got.json().signResponses, true)
  })
})
