import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ValidationResultSchema } from '@keyturn/protocol'
import { CompiledSchemas, cachingSerializerFactory, nullableForSerialization } from './schema-compilers.js'

const [example] =
  (ValidationResultSchema as { examples?: Record<string, Record<string, unknown>>[] }).examples ?? []

describe('response serializers', () => {
  const serialize = cachingSerializerFactory(new CompiledSchemas())(undefined, undefined)({
    schema: ValidationResultSchema,
    method: 'POST',
    url: '/api/v0/licenses/actions/validate-key',
    httpStatus: '200',
  })

  it('write every nullable field, null or not, as JSON.stringify does', () => {
    assert.ok(example?.license)
    const withNulls = {
      ...example,
      reason: null,
      license: { ...example.license, maxActivations: null, expirationDate: null, customerId: null },
    }
    const withValues = {
      ...example,
      isValid: false,
      reason: 'expired',
      license: {
        ...example.license,
        maxActivations: 3,
        expirationDate: '2031-01-01T00:00:00.000Z',
        customerId: 'cus_7fQx2mNc4RtYp9LkWv3bHs',
        metadata: { plan: 'pro', seats: 2.5, trial: false },
      },
    }
    for (const answer of [withNulls, withValues]) {
      assert.deepEqual(JSON.parse(serialize(answer)), answer)
    }
  })

  it('need no schema validation to choose between a value and null', () => {
    const written = JSON.stringify(nullableForSerialization(ValidationResultSchema))
    assert.ok(!written.includes('"anyOf"'), written)
    // The schema the OpenAPI document and the validators use is left as it was.
    assert.ok(JSON.stringify(ValidationResultSchema).includes('"anyOf"'))
  })
})
