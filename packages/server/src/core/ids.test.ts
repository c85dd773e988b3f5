import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { newEventId, newId } from './ids.js'

describe('ids', () => {
  it('keep their documented shape: the prefix and 22 base62 characters', () => {
    for (const kind of ['license', 'product', 'request', 'activation'] as const) {
      assert.match(newId(kind), /^(lic|prd|req|act)_[0-9A-Za-z]{22}$/)
    }
  })

  it('sort bytewise by the time they were made, and differ within one millisecond', () => {
    const at = Date.parse('2026-11-27T07:00:00.000Z')
    const times = [at, at + 1, at + 61, at + 3_600_000, Date.parse('2100-01-01T00:00:00Z')]
    const ids = times.map((time) => newId('license', time))
    assert.deepEqual([...ids].sort(), ids)
    const sameMillisecond = Array.from({ length: 1000 }, () => newId('request', at))
    assert.equal(new Set(sameMillisecond).size, 1000)
    assert.ok(sameMillisecond.every((id) => id.slice(4, 12) === ids[0]?.slice(4, 12)))
  })

  it('leave event ids in their own scheme (time-ordered and monotonic)', () => {
    const at = new Date('2026-11-27T07:00:00.000Z')
    const [first, second] = [newEventId(at), newEventId(at)]
    assert.ok(first < second)
  })
})
