import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { expectInvalidField, expectProblem } from '../../testing/licenses.js'
import { call } from '../../testing/vendors.js'

describeEachDatabase('licenses: keys of your own', (database) => {
  it('creates a license with a key of its own, validated by exactly that key', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const key = 'acme-PRO-2024/000183+x'
    const license = await call(app, headers, 'POST', '/licenses', 201, { productId, key })
    assert.equal(license.key, key, 'stored as given')

    const valid = await call(app, headers, 'POST', '/licenses/validate', 200, { key, productId })
    assert.deepEqual([valid.isValid, valid.license.id], [true, license.id])
    for (const near of ['ACME-PRO-2024/000183+X', 'acme-PRO-2024/000183+', 'acme-pro-2024/000183+x']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses/validate',
        headers,
        payload: { key: near, productId },
      })
      expectProblem(res, 404, 'license_not_found')
    }
    const long = 'K'.repeat(256)
    const longest = await call(app, headers, 'POST', '/licenses', 201, { productId, key: long })
    assert.equal(
      (await call(app, headers, 'POST', '/licenses/validate', 200, { key: long, productId })).license.id,
      longest.id,
    )
  })

  it("stores a given key shaped like Keyturn's in canonical form, matched in any spelling", async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await call(app, headers, 'POST', '/licenses', 201, {
      productId,
      key: 'a1b2c3d4e5f6g7h8j9k0m1n2p',
    })
    assert.equal(license.key, 'A1B2C-3D4E5-F6G7H-8J9K0-M1N2P')
    const valid = await call(app, headers, 'POST', '/licenses/validate', 200, {
      key: 'a1b2c-3d4e5-f6g7h-8j9ko-m1n2p',
      productId,
    })
    assert.equal(valid.license.id, license.id)
  })

  it('answers 409 license_key_taken for a taken key, in any product, and creates nothing', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const other = await call(app, headers, 'POST', '/products', 201, { name: 'Other' })
    await call(app, headers, 'POST', '/licenses', 201, { productId, key: 'LEGACY-0001' })
    const before = (await call(app, headers, 'GET', '/licenses?limit=1', 200)).totalCount

    const answers = await Promise.all(
      [productId, other.id, productId].map((target) =>
        app.inject({
          method: 'POST',
          url: '/api/v0/licenses',
          headers,
          payload: { productId: target, key: 'LEGACY-0001' },
        }),
      ),
    )
    for (const answer of answers) {
      const problem = expectProblem(answer, 409, 'license_key_taken')
      assert.equal(problem.errors?.[0]?.pointer, '#/key')
    }
    assert.equal((await call(app, headers, 'GET', '/licenses?limit=1', 200)).totalCount, before)
  })

  it('refuses keys too short, too long, with spaces at an end or outside printable ASCII', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    for (const key of [
      'SHORT-7',
      'K'.repeat(257),
      ' LEADING-SPACE',
      'TRAILING-SPACE ',
      'TAB\tINSIDE-KEY',
      'CAFÉ-0000-1',
    ]) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers,
        payload: { productId, key },
      })
      expectInvalidField(res, '#/key')
    }
  })
})
