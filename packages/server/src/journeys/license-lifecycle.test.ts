import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'

describeEachDatabase('license lifecycle', (database) => {
  it('creates, validates, revokes, reinstates and lists a license', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId },
    })
    assert.equal(created.statusCode, 201, created.body)
    const license = created.json()

    const valid = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses/validate',
      headers,
      payload: { key: license.key, productId },
    })
    assert.equal(valid.statusCode, 200, valid.body)
    assert.equal(valid.json().isValid, true)

    const revoked = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/revoke`,
      headers,
    })
    assert.equal(revoked.json().status, 'revoked', revoked.body)

    const invalid = await app.inject({
      method: 'POST',
      url: '/v0/licenses/validate',
      headers,
      payload: { key: license.key, productId },
    })
    assert.deepEqual([invalid.json().isValid, invalid.json().reason], [false, 'revoked'])

    const reinstated = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.id}/reinstate`,
      headers,
    })
    assert.equal(reinstated.json().status, 'active', reinstated.body)

    const list = await app.inject({
      method: 'GET',
      url: '/api/v0/licenses?filter=status:eq:active&sort=key:asc',
      headers,
    })
    assert.equal(list.statusCode, 200, list.body)
    assert.equal(list.json().totalCount, 1)
  })
})
