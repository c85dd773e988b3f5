import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { LicenseId } from '@keyturn/protocol'
import type { App } from '../../http/app-types.js'
import { buildTestApp, testStart } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import { type AuthHeaders, createLicense, getLicense, validateLicense } from '../../testing/licenses.js'

const reinstateUrl = (id: string) => `/api/v0/licenses/${id}/reinstate`

async function revoke(app: App, headers: AuthHeaders, id: LicenseId): Promise<void> {
  const res = await app.inject({ method: 'POST', url: `/api/v0/licenses/${id}/revoke`, headers })
  assert.equal(res.statusCode, 200, res.body)
}

// Its answers to a malformed or unknown id and to a product key are tested with the other status
// action's in license-status-actions.test.ts.
describeEachDatabase('POST /api/v0/licenses/:id/reinstate', (database) => {
  it('reinstates a revoked license: status active, isRevoked false, updatedAt now', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    clock.set('2030-02-01T00:00:00.000Z')
    await revoke(app, headers, created.id)

    clock.set('2030-03-01T00:00:00.000Z')
    const res = await app.inject({ method: 'POST', url: reinstateUrl(created.id), headers })

    assert.equal(res.statusCode, 200, res.body)
    const expected = {
      ...created,
      updatedAt: '2030-03-01T00:00:00.000Z',
      statusDetails: { isRevoked: false, isExpired: false, determinedAt: '2030-03-01T00:00:00.000Z' },
    }
    assert.deepEqual(res.json(), expected)
    assert.deepEqual(await getLicense(app, headers, created.id), expected)
  })

  it('changes nothing for a license that is not revoked, updatedAt included', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })

    clock.set('2030-02-01T00:00:00.000Z')
    const res = await app.inject({ method: 'POST', url: reinstateUrl(created.id), headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), {
      ...created,
      statusDetails: { ...created.statusDetails, determinedAt: '2030-02-01T00:00:00.000Z' },
    })
    assert.equal(res.json().updatedAt, testStart)
  })

  it('changes nothing the second time, updatedAt included', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    await revoke(app, headers, created.id)
    clock.set('2030-02-01T00:00:00.000Z')
    const first = await app.inject({ method: 'POST', url: reinstateUrl(created.id), headers })
    assert.equal(first.statusCode, 200, first.body)

    clock.set('2030-03-01T00:00:00.000Z')
    const second = await app.inject({ method: 'POST', url: reinstateUrl(created.id), headers })

    assert.equal(second.statusCode, 200, second.body)
    assert.equal(second.json().status, 'active')
    assert.equal(second.json().updatedAt, '2030-02-01T00:00:00.000Z')
  })

  it('gives status expired when the expiration date has passed', async (t) => {
    const { app, headers, productId, clock } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, {
      productId,
      expirationDate: '2030-01-15T00:00:00.000Z',
    })
    await revoke(app, headers, created.id)

    clock.set('2030-02-01T00:00:00.000Z')
    const res = await app.inject({ method: 'POST', url: reinstateUrl(created.id), headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().status, 'expired')
    assert.deepEqual(res.json().statusDetails, {
      isRevoked: false,
      isExpired: true,
      determinedAt: '2030-02-01T00:00:00.000Z',
    })
  })

  it('lets the license validate again', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await createLicense(app, headers, { productId })
    await revoke(app, headers, created.id)

    await app.inject({ method: 'POST', url: reinstateUrl(created.id), headers })

    const result = await validateLicense(app, headers, { key: created.key, productId })
    assert.deepEqual([result.isValid, result.reason], [true, null])
  })
})
