import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type ReachabilityChange, ReachabilityTracker } from './reachability.js'

describe('reachability', () => {
  it('tells each change once, and ignores an answer to a statement begun before a failure seen since', () => {
    const tracker = new ReachabilityTracker()
    const changes: boolean[] = []
    tracker.onChange((change: ReachabilityChange) => changes.push(change.reachable))

    const inFlight = tracker.errors // a statement begins while all is well
    tracker.lost(new Error('terminating connection due to administrator command'))
    tracker.lost(new Error('connection refused')) // the same outage: not told again
    tracker.answered(inFlight) // it answers on a connection not yet ended: still down
    assert.equal(tracker.reachable, false)

    const after = tracker.errors // a statement begun after the failures
    tracker.answered(after)
    tracker.answered()
    assert.deepEqual(changes, [false, true])
  })
})
