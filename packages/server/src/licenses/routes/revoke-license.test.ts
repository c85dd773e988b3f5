import assert from 'node:assert/strict'
import { it } from 'node:test'
import { buildTestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { createLicense, getLicense, validateLicense } from '../../testing/licenses.js'

const revokeUrl = (id: string) => `/api/v0/licenses/${id}/revoke`
const later = '2030-02-01T00:00:00.000Z'

// Its answers to a malformed or unknown id and to a product key are tested with the other status
// action's in license-status-actions.test.ts.
describeEachDatabase('POST /api/v0/licenses/:id/revoke', (database) => {
  it('revokes an active license: status revoked, isRevoked true, updatedAt now', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    clock.set(later)
    const res = await app.inject({ method: 'POST', url: revokeUrl(created.id), headers })

    assert.equal(res.statusCode, 200, res.body)
    const expected = {
      ...created,
      status: 'revoked',
      updatedAt: later,
      statusDetails: { isRevoked: true, isExpired: false, determinedAt: later },
    }
    assert.deepEqual(res.json(), expected)
    assert.deepEqual(await getLicense(app, headers, created.id), expected)
  })

  it('changes nothing when the license is already revoked, updatedAt included', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    clock.set(later)
    const first = await app.inject({ method: 'POST', url: revokeUrl(created.id), headers })
    assert.equal(first.statusCode, 200, first.body)

    clock.set('2030-03-01T00:00:00.000Z')
    const second = await app.inject({ method: 'POST', url: revokeUrl(created.id), headers })

    assert.equal(second.statusCode, 200, second.body)
    assert.deepEqual(second.json(), {
      ...first.json(),
      statusDetails: { ...first.json().statusDetails, determinedAt: '2030-03-01T00:00:00.000Z' },
    })
    assert.equal(second.json().updatedAt, later)
  })

  it('revokes an expired license: status revoked with both flags set', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-01-15T00:00:00.000Z',
    })

    clock.set(later)
    const res = await app.inject({ method: 'POST', url: revokeUrl(created.id), headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().status, 'revoked')
    assert.deepEqual(res.json().statusDetails, { isRevoked: true, isExpired: true, determinedAt: later })
  })

  it('makes validation answer isValid false with reason revoked', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    await app.inject({ method: 'POST', url: revokeUrl(created.id), headers })

    const result = await validateLicense(app, headers, { key: created.key, productId })
    assert.deepEqual([result.isValid, result.reason], [false, 'revoked'])
  })

  it('accepts an empty JSON object as the body', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    const res = await app.inject({ method: 'POST', url: revokeUrl(created.id), headers, payload: {} })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().status, 'revoked')
  })
})
