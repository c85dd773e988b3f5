import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ProductId } from '@keyturn/protocol'
import { FixedClock } from '../testing/fixed-clock.js'
import { RefusalLog, refusalLogCapacity } from './refusal-log.js'

const product = 'prd_a' as ProductId

describe('the record of refused clients', () => {
  it('counts each client once per budget, the last refused first, and forgets the one refused longest ago beyond its capacity', () => {
    const clock = new FixedClock('2030-01-01T00:00:00.000Z')
    const log = new RefusalLog(clock)
    for (let i = 0; i < refusalLogCapacity; i++) {
      log.refused('address', 'address', `198.51.100.${i}`, null)
    }
    clock.advance(1000)
    log.refused('address', 'address', '198.51.100.0', null) // refused again: now the latest
    log.refused('management', 'apiKey', 'key_a', product)
    assert.equal(log.latest(1000, undefined).length, refusalLogCapacity)
    const [latest, again] = log.latest(2, undefined)
    assert.deepEqual(latest, {
      budget: 'management',
      clientKind: 'apiKey',
      client: 'key_a',
      productId: product,
      refused: 1,
      firstRefusedAt: '2030-01-01T00:00:01.000Z',
      lastRefusedAt: '2030-01-01T00:00:01.000Z',
    })
    assert.deepEqual(
      [again?.client, again?.refused, again?.firstRefusedAt],
      ['198.51.100.0', 2, '2030-01-01T00:00:00.000Z'],
    )
    // 198.51.100.1 was refused longest ago: forgotten to make room for key_a.
    assert.ok(!log.latest(1000, undefined).some((entry) => entry.client === '198.51.100.1'))
    assert.deepEqual(
      log.latest(20, product).map((entry) => entry.client),
      ['key_a'],
    )
    assert.equal(log.since.toISOString(), '2030-01-01T00:00:00.000Z')
  })
})
