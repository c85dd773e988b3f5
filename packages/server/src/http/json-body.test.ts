import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildTestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { assertProblem } from '../testing/problems.js'
import { jsonDepth, maxJsonDepth } from './json-body.js'

/** JSON text of `levels` nested arrays or objects, built as text: JSON.stringify would overflow first. */
const nestedArrays = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`
const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`

describe('jsonDepth', () => {
  it('counts the deepest nesting of objects and arrays when they are mixed', () => {
    assert.equal(jsonDepth('1'), 0)
    assert.equal(jsonDepth('{"a":[1,{"b":[]}],"c":{}}'), 4)
  })

  it('ignores brackets and escaped quotes inside strings when counting', () => {
    assert.equal(jsonDepth('{"a":"[[[{{{\\"[[["}'), 1)
    assert.equal(jsonDepth('["\\\\",[]]'), 2)
  })

  it('stops counting when the nesting passes the limit', () => {
    assert.equal(jsonDepth(nestedArrays(100_000)), maxJsonDepth + 1)
  })
})

describeEachDatabase('JSON bodies nested too deeply', (database) => {
  it('answers 400 validation_failed when a body nests deeper than the limit', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const hostile = [
      `{"productId":"${productId}","expirationDate":${nestedArrays(5000)}}`,
      `{"productId":"${productId}","maxActivations":${nestedObjects(maxJsonDepth)}}`,
      nestedArrays(20_000),
    ]
    for (const payload of hostile) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': 'deep' },
        payload,
      })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.match(problem.detail, /more than 32 levels deep/)
      assert.deepEqual(problem.errors, [{ pointer: '#', detail: problem.detail }])
    }
    const list = await app.inject({ method: 'GET', url: '/api/v0/licenses', headers })
    assert.equal(list.json().totalCount, 0, list.body)
  })

  it('answers 400 bad_request when the body is not UTF-8, storing nothing', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const latin1 = Buffer.concat([Buffer.from('{"name":"M'), Buffer.from([0xfc]), Buffer.from('ller"}')])

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers: { ...headers, 'content-type': 'application/json; charset=latin1' },
      payload: latin1,
    })
    const withBom = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers: { ...headers, 'content-type': 'application/json' },
      payload: Buffer.from('\uFEFF{"name":"Müller"}'),
    })

    assert.match(assertProblem(res, 400, 'bad_request').detail, /not valid UTF-8/)
    assert.equal(withBom.statusCode, 201, withBom.body)
    assert.equal(withBom.json().name, 'Müller')
    const list = await app.inject({ method: 'GET', url: '/api/v0/products', headers })
    assert.deepEqual(
      list
        .json()
        .data.map((product: { name: string }) => product.name)
        .filter((name: string) => name.startsWith('M')),
      ['Müller'],
    )
  })

  it('refuses a deep body before the role check when a client key sends it to an admin route', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const client = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: 'app', role: 'client', productId },
    })
    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers: {
        authorization: `Bearer ${client.json().secret}`,
        'content-type': 'application/json',
        'idempotency-key': 'deep',
      },
      payload: `{"name":${nestedArrays(3200)}}`,
    })

    assertProblem(res, 400, 'validation_failed')
  })

  it('accepts a body nested exactly as deep as the limit', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const license = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId },
    })
    // The body object is level 1, metadata level 2: 30 more objects reach the limit.
    const metadata = nestedObjects(maxJsonDepth - 1)

    const res = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${license.json().id}/activations`,
      headers: { ...headers, 'content-type': 'application/json' },
      payload: `{"fingerprint":"deep-machine","metadata":${metadata}}`,
    })

    assert.equal(res.statusCode, 201, res.body)
    assert.equal(jsonDepth(JSON.stringify(res.json().metadata)), maxJsonDepth - 1)
  })
})
