import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseFilter } from './list-query.js'
import { mergeMetadata, newMetadata } from './metadata.js'

describe('metadata', () => {
  it('drops null values on create and removes keys set to null on merge, keeping the others', () => {
    assert.deepEqual(newMetadata({ a: 'x', b: null, c: 1, d: false }), { a: 'x', c: 1, d: false })
    assert.deepEqual(mergeMetadata({ a: 'x', b: 2, c: true }, { b: null, c: false, e: 'new' }), {
      a: 'x',
      c: false,
      e: 'new',
    })
    assert.deepEqual(mergeMetadata({ a: 'x' }, undefined), { a: 'x' })
  })

  it('refuses a merge past 50 keys or 8 KiB, and numbers JSON cannot write', () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]))
    assert.throws(() => mergeMetadata(fifty, { one: 'more' }), { code: 'validation_failed' })
    assert.deepEqual(Object.keys(mergeMetadata(fifty, { k0: null, one: 'more' })).length, 50)
    const big = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'x'.repeat(500)]))
    assert.throws(() => newMetadata(big), { code: 'validation_failed' })
    assert.throws(() => newMetadata({ n: Number.POSITIVE_INFINITY }), { code: 'validation_failed' })
  })
})

describe('parseFilter with metadata', () => {
  const fields = { metadata: { type: 'metadata' }, status: { type: 'string' } } as const

  it('reads metadata.<key>:eq:<value>, keys with dots and values with colons included', () => {
    assert.deepEqual(parseFilter('metadata.stripe.sub:eq:sub_1:x,status:eq:a', fields), [
      { field: 'metadata', operator: 'eq', value: 'sub_1:x', key: 'stripe.sub' },
      { field: 'status', operator: 'eq', value: 'a' },
    ])
  })

  it('refuses other operators, bad keys and a bare metadata field as invalid_filter', () => {
    for (const rule of [
      'metadata.a:ne:x',
      'metadata.:eq:x',
      'metadata.a b:eq:x',
      'metadata:eq:x',
      'metadata.a:eq',
    ]) {
      assert.throws(() => parseFilter(rule, fields), { code: 'invalid_filter' }, rule)
    }
  })
})
