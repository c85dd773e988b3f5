import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { heapFlagsFor, missingHeapFlags } from './heap-flags.js'

describe('the heap flags of keyturn serve', () => {
  it('follow KEYTURN_HEAP_SEMI_SPACE_MB and KEYTURN_HEAP_GROWTH_PERCENT, 0 leaving the choice to V8', () => {
    assert.deepEqual(heapFlagsFor({}), ['--max-semi-space-size=4', '--heap-growing-percent=100'])
    assert.deepEqual(heapFlagsFor({ KEYTURN_HEAP_SEMI_SPACE_MB: '8', KEYTURN_HEAP_GROWTH_PERCENT: '0' }), [
      '--max-semi-space-size=8',
    ])
  })

  it('are none under an invalid configuration, which the server then reports itself', () => {
    assert.deepEqual(heapFlagsFor({ KEYTURN_HEAP_SEMI_SPACE_MB: 'lots' }), [])
  })

  it('leave a flag the process was started with alone, whatever its value or spelling', () => {
    const wanted = ['--max-semi-space-size=4', '--heap-growing-percent=100']
    assert.deepEqual(missingHeapFlags(wanted, []), wanted)
    assert.deepEqual(missingHeapFlags(wanted, ['--max_semi_space_size=16', '--enable-source-maps']), [
      '--heap-growing-percent=100',
    ])
    assert.deepEqual(missingHeapFlags(wanted, wanted), [])
  })
})
