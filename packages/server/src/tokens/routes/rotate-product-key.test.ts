import assert from 'node:assert/strict'
import { it } from 'node:test'
import { LicenseTokenError, validateLicenseToken } from '@keyturn/client'
import { decodeProtectedHeader } from 'jose'
import {
  buildTestApp,
  createProduct,
  productKeyHeaders,
  type TestApp,
  testSecretKeys,
} from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { KyselySigningKeyStore } from '../kysely-signing-key-store.js'
import { newSigningKey } from '../signing-keys.js'
import { answerSignerTtlMs } from '../token-service.js'

async function issueToken(test: TestApp): Promise<string> {
  const { app, headers, productId } = test
  const license = await app.inject({
    method: 'POST',
    url: '/api/v0/licenses',
    headers,
    payload: { productId },
  })
  const res = await app.inject({
    method: 'POST',
    url: `/api/v0/licenses/${license.json().id}/tokens`,
    headers,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().token
}

const getProduct = (test: TestApp) =>
  test.app.inject({ method: 'GET', url: `/api/v0/products/${test.productId}`, headers: test.headers })

describeEachDatabase(
  'POST /api/v0/products/:id/keys/rotate and GET /api/v0/products/:id/keys',
  (database) => {
    it('makes a new current key while tokens signed before keep verifying with the old key listed', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const before = (await getProduct(test)).json()
      const oldToken = await issueToken(test)
      test.clock.advance(60_000)

      const rotated = await app.inject({
        method: 'POST',
        url: `/api/v0/products/${productId}/keys/rotate`,
        headers,
      })

      assert.equal(rotated.statusCode, 201, rotated.body)
      const newKey = rotated.json()
      assert.notEqual(newKey.keyId, before.keyId)
      assert.equal(newKey.isCurrent, true)
      const after = (await getProduct(test)).json()
      assert.equal(after.keyId, newKey.keyId)
      assert.equal(after.publicKey, newKey.publicKey)

      const keys = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}/keys`, headers })
      assert.equal(keys.statusCode, 200, keys.body)
      const list = keys.json()
      assert.deepEqual(
        list.data.map((key: { keyId: string; isCurrent: boolean; retiredAt: string | null }) => [
          key.keyId,
          key.isCurrent,
          key.retiredAt,
        ]),
        [
          [newKey.keyId, true, null],
          [before.keyId, false, '2030-01-01T00:01:00.000Z'],
        ],
      )
      assert.equal(list.totalCount, 2)

      const now = test.clock.now()
      const allKeys = list.data.map((key: { publicKey: string }) => key.publicKey)
      assert.equal(
        (await validateLicenseToken({ productId, publicKey: allKeys, token: oldToken, now })).productId,
        productId,
      )
      await assert.rejects(
        validateLicenseToken({ productId, publicKey: newKey.publicKey, token: oldToken, now }),
        (error: unknown) => error instanceof LicenseTokenError && error.code === 'invalid_signature',
      )

      const newToken = await issueToken(test)
      assert.equal(decodeProtectedHeader(newToken).kid, newKey.keyId)
      assert.equal(
        (await validateLicenseToken({ productId, publicKey: newKey.publicKeyJwk, token: newToken, now }))
          .productId,
        productId,
      )
    })

    it('lets a product key list its own product’s keys, but not rotate them or see another product’s', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      const own = await productKeyHeaders(app, headers, productId)
      const other = await createProduct(app, headers)

      const listOwn = await app.inject({
        method: 'GET',
        url: `/api/v0/products/${productId}/keys`,
        headers: own,
      })
      const rotateOwn = await app.inject({
        method: 'POST',
        url: `/api/v0/products/${productId}/keys/rotate`,
        headers: own,
      })
      const listOther = await app.inject({
        method: 'GET',
        url: `/api/v0/products/${other}/keys`,
        headers: own,
      })
      const rotateOther = await app.inject({
        method: 'POST',
        url: `/api/v0/products/${other}/keys/rotate`,
        headers: own,
      })

      assert.equal(listOwn.statusCode, 200, listOwn.body)
      assert.equal(listOwn.json().totalCount, 1)
      assert.equal(rotateOwn.statusCode, 403, rotateOwn.body)
      assert.equal(rotateOwn.json().code, 'forbidden')
      assert.equal(listOther.statusCode, 404, listOther.body)
      assert.equal(listOther.json().code, 'product_not_found')
      assert.equal(rotateOther.statusCode, 404, rotateOther.body)
    })

    it('answers 404 product_not_found for an unknown product and pages through keys', async (t) => {
      const test = await buildTestApp(t, database)
      const { app, headers, productId } = test
      for (let i = 0; i < 3; i++) {
        test.clock.advance(1000)
        await app.inject({ method: 'POST', url: `/api/v0/products/${productId}/keys/rotate`, headers })
      }

      const unknown = await app.inject({
        method: 'POST',
        url: '/api/v0/products/prd_nope/keys/rotate',
        headers,
      })
      const page = await app.inject({
        method: 'GET',
        url: `/api/v0/products/${productId}/keys?limit=3&page=1`,
        headers,
      })

      assert.equal(unknown.statusCode, 404, unknown.body)
      assert.equal(unknown.json().code, 'product_not_found')
      const { data, ...envelope } = page.json()
      assert.equal(data.length, 1)
      assert.deepEqual(envelope, {
        totalCount: 4,
        page: 1,
        limit: 3,
        totalPages: 2,
        hasPrevPage: true,
        hasNextPage: false,
        prevPage: 0,
        nextPage: null,
      })
    })

    it('gives every one of 8 simultaneous rotations a 201 and leaves exactly one current key', async (t) => {
      const { app, headers, productId } = await buildTestApp(t, database)

      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          app.inject({ method: 'POST', url: `/api/v0/products/${productId}/keys/rotate`, headers }),
        ),
      )

      for (const res of results) {
        assert.equal(res.statusCode, 201, res.body)
      }
      const keys = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}/keys`, headers })
      const list: { keyId: string; isCurrent: boolean }[] = keys.json().data
      assert.equal(list.length, 9, keys.body)
      assert.equal(list.filter((key) => key.isCurrent).length, 1, keys.body)
      const current = list.find((key) => key.isCurrent)?.keyId
      assert.ok(results.some((res) => res.json().keyId === current))
      const product = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
      assert.equal(product.json().keyId, current)
    })

    it('signs with a key another process rotated in once answerSignerTtlMs has passed or the clock went back, and verifiably before', async (t) => {
      const test = await buildTestApp(t, database)
      const before = await issueToken(test)
      // Another process rotates: the row changes under this one, which is not told.
      const next = newSigningKey(testSecretKeys.signingKeyEncryption)
      await new KyselySigningKeyStore(test.connection.db).rotate(test.productId, next, test.clock.now())

      const meanwhile = await issueToken(test)
      test.clock.advance(answerSignerTtlMs)
      const after = await issueToken(test)

      assert.equal(decodeProtectedHeader(meanwhile).kid, decodeProtectedHeader(before).kid)
      assert.equal(decodeProtectedHeader(after).kid, next.keyId)
      const listed = await test.app.inject({
        method: 'GET',
        url: `/api/v0/products/${test.productId}/keys`,
        headers: test.headers,
      })
      const publicKey = listed.json().data.map((key: { publicKey: string }) => key.publicKey)
      for (const token of [meanwhile, after]) {
        const checked = await validateLicenseToken({
          productId: test.productId,
          publicKey,
          token,
          now: test.clock.now(),
        })
        assert.equal(checked.productId, test.productId)
      }

      // A clock set back (the system's, by NTP) does not keep a key longer than the time itself.
      const third = newSigningKey(testSecretKeys.signingKeyEncryption)
      await new KyselySigningKeyStore(test.connection.db).rotate(test.productId, third, test.clock.now())
      test.clock.advance(-3_600_000)
      assert.equal(decodeProtectedHeader(await issueToken(test)).kid, third.keyId)
    })
  },
)
