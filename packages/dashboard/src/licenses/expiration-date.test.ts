import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { endOfDayUtc } from '@keyturn/protocol'
import { expirationFromInput, inputFromExpiration } from './expiration-date.js'

describe('an expiration date typed in the dashboard', () => {
  it('means the end of that day in UTC, the same instant as the CLI gives it', () => {
    assert.equal(expirationFromInput('2031-01-01'), '2031-01-01T23:59:59.999Z')
    assert.equal(expirationFromInput('2031-01-01'), endOfDayUtc('2031-01-01'))
  })

  it('is never when the field is empty', () => {
    assert.equal(expirationFromInput(''), null)
  })

  it('shows a stored expiration as its UTC day, which reads back as the same instant', () => {
    const stored = '2031-01-01T23:59:59.999Z'
    assert.equal(inputFromExpiration(stored), '2031-01-01')
    assert.equal(expirationFromInput(inputFromExpiration(stored)), stored)
    assert.equal(inputFromExpiration(null), '')
  })
})
