import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ProductId } from '@keyturn/protocol'
import { FixedClock } from '../testing/fixed-clock.js'
import { DailyCounters } from './daily-counters.js'

const product = 'prd_counted' as ProductId

describe('daily counters', () => {
  it('counts per product and UTC day, and keeps counts given back after a failed write', () => {
    const clock = new FixedClock('2030-01-01T23:59:59.999Z')
    const counters = new DailyCounters(clock)
    counters.count(product, 'validationsValid')
    counters.count(product, 'validationsValid')
    clock.advance(1) // the next UTC day
    counters.count(product, 'licensesCreated')
    const taken = counters.take()
    assert.deepEqual(taken, [
      { productId: product, day: '2030-01-01', counts: [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] },
      { productId: product, day: '2030-01-02', counts: [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0] },
    ])
    assert.deepEqual(counters.take(), [], 'taken once')

    counters.count(product, 'licensesCreated') // counted while the write failed
    counters.back(taken)
    assert.deepEqual(
      counters.take().sort((a, b) => a.day.localeCompare(b.day)),
      [
        { productId: product, day: '2030-01-01', counts: [2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] },
        { productId: product, day: '2030-01-02', counts: [0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0] },
      ],
    )
  })
})
