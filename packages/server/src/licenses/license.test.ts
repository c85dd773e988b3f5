import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { aLicense as storedLicense } from '../testing/licenses.js'
import { type License, stateAt, viewAt } from './license.js'

/** A license as stored (testing/licenses.ts); only the fields a test names differ. */
function aLicense(fields: Partial<License> = {}): License {
  return storedLicense({
    id: 'lic_test',
    productId: 'prd_test',
    key: 'AAAAA-BBBBB-CCCCC-DDDDD-EEEEE',
    ...fields,
  })
}

const at = (iso: string) => new Date(iso)

describe('stateAt', () => {
  it('is active without revocation or expiration date, at any time', () => {
    for (const now of ['2030-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
      assert.deepEqual(stateAt(aLicense(), at(now)), {
        status: 'active',
        isRevoked: false,
        isExpired: false,
        determinedAt: at(now),
      })
    }
  })

  it('is active until the expiration date and expired from that instant on', () => {
    const license = aLicense({ expirationDate: at('2030-06-01T00:00:00.000Z') })

    assert.equal(stateAt(license, at('2030-05-31T23:59:59.999Z')).status, 'active')
    assert.deepEqual(stateAt(license, at('2030-06-01T00:00:00.000Z')), {
      status: 'expired',
      isRevoked: false,
      isExpired: true,
      determinedAt: at('2030-06-01T00:00:00.000Z'),
    })
    assert.equal(stateAt(license, at('2031-01-01T00:00:00.000Z')).status, 'expired')
  })

  it('is revoked once revoked, whatever the time', () => {
    const license = aLicense({ revokedAt: at('2030-02-01T00:00:00.000Z') })

    assert.deepEqual(stateAt(license, at('2030-03-01T00:00:00.000Z')), {
      status: 'revoked',
      isRevoked: true,
      isExpired: false,
      determinedAt: at('2030-03-01T00:00:00.000Z'),
    })
  })

  it('gives revoked precedence over expired, and reports both flags', () => {
    const license = aLicense({
      revokedAt: at('2030-02-01T00:00:00.000Z'),
      expirationDate: at('2030-03-01T00:00:00.000Z'),
    })

    assert.deepEqual(stateAt(license, at('2030-04-01T00:00:00.000Z')), {
      status: 'revoked',
      isRevoked: true,
      isExpired: true,
      determinedAt: at('2030-04-01T00:00:00.000Z'),
    })
  })

  it('judges at the instant it is given, not the revocation or creation time', () => {
    const license = aLicense({ expirationDate: at('2030-03-01T00:00:00.000Z') })

    assert.equal(stateAt(license, at('2029-01-01T00:00:00.000Z')).status, 'active') // before creation
    assert.equal(
      stateAt(license, at('2030-03-01T00:00:00.000Z')).determinedAt.toISOString(),
      '2030-03-01T00:00:00.000Z',
    )
  })
})

describe('viewAt', () => {
  it('pairs the license with its state at the instant', () => {
    const license = aLicense({ expirationDate: at('2030-03-01T00:00:00.000Z') })
    const now = at('2030-04-01T00:00:00.000Z')

    assert.deepEqual(viewAt(license, now), { license, state: stateAt(license, now) })
  })
})
