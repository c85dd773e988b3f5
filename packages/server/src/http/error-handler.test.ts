import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { ErrorCode } from '@keyturn/protocol'
import { sql } from 'kysely'
import { buildApp } from '../app.js'
import { deriveSecretKeys } from '../core/secrets.js'
import { buildTestApp, testAdminSecret } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { FixedClock } from '../testing/fixed-clock.js'
import { assertProblem } from '../testing/problems.js'
import { loggerOptions } from './logger.js'

const genericDetail = 'The server could not complete the request.'

describeEachDatabase('HTTP error handling', (database) => {
  // Bodies refused before the route's schema is applied, each POSTed to /api/v0/products.
  const refusedBodies: {
    answers: string
    contentType: string
    payload: string
    status: number
    code: ErrorCode
    detail?: RegExp[]
  }[] = [
    {
      answers: '400 bad_request, not 500, for malformed JSON',
      contentType: 'application/json',
      payload: '{"name": "Acme",',
      status: 400,
      code: 'bad_request',
    },
    {
      answers: '400 bad_request for a JSON body that sets __proto__',
      contentType: 'application/json',
      payload: '{"name": "Acme", "__proto__": {"admin": true}}',
      status: 400,
      code: 'bad_request',
    },
    {
      answers: '415 unsupported_media_type for a text/plain body',
      contentType: 'text/plain',
      payload: '{"name": "Acme"}',
      status: 415,
      code: 'unsupported_media_type',
    },
    {
      answers: 'a form-encoded body (curl -d) with a 415 that names application/json',
      contentType: 'application/x-www-form-urlencoded',
      payload: 'name=Acme',
      status: 415,
      code: 'unsupported_media_type',
      detail: [/Content-Type: application\/json/, /application\/x-www-form-urlencoded/],
    },
    {
      answers: '413 payload_too_large for a body over 64 KiB',
      contentType: 'application/json',
      payload: JSON.stringify({ name: 'x'.repeat(64 * 1024) }),
      status: 413,
      code: 'payload_too_large',
    },
  ]
  for (const body of refusedBodies) {
    it(`answers ${body.answers}`, async (t) => {
      const { app, headers } = await buildTestApp(t, database)

      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/products',
        headers: { ...headers, 'content-type': body.contentType },
        payload: body.payload,
      })

      const problem = assertProblem(res, body.status, body.code)
      for (const pattern of body.detail ?? []) {
        assert.match(problem.detail, pattern)
      }
    })
  }

  it('accepts a body of just under 64 KiB as far as the schema', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const payload = JSON.stringify({ name: 'x'.repeat(64 * 1024 - 20) })
    assert.ok(payload.length <= 64 * 1024)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers: { ...headers, 'content-type': 'application/json' },
      payload,
    })

    const problem = assertProblem(res, 400, 'validation_failed') // name is at most 200 characters
    assert.deepEqual(
      problem.errors?.map((error) => error.pointer),
      ['#/name'],
    )
  })

  it('answers 400 validation_failed naming an unknown body field, which is not stripped', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers,
      payload: { name: 'Acme', admin: true },
    })

    const problem = assertProblem(res, 400, 'validation_failed')
    assert.deepEqual(problem.errors, [{ pointer: '#/admin', detail: 'unknown field "admin"' }])
    assert.match(problem.detail, /admin/)
  })

  it('answers 400 validation_failed with a pointer for a missing required field', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'POST', url: '/api/v0/products', headers, payload: {} })

    const problem = assertProblem(res, 400, 'validation_failed')
    assert.deepEqual(
      problem.errors?.map((error) => error.pointer),
      ['#/name'],
    )
  })

  it('answers 400 validation_failed for a wrong type, without coercing it', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const name of [123, true, null, ['Acme'], { text: 'Acme' }]) {
      const res = await app.inject({ method: 'POST', url: '/api/v0/products', headers, payload: { name } })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        ['#/name'],
        res.body,
      )
    }
    const list = await app.inject({ method: 'GET', url: '/api/v0/products', headers })
    assert.equal(list.json().totalCount, 1, 'no product was created')
  })

  it('reports a value outside a nullable field once, saying what the field accepts', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)

    for (const maxActivations of [0, false, '', '3']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers,
        payload: { productId, maxActivations },
      })

      const problem = assertProblem(res, 400, 'validation_failed')
      assert.equal(
        problem.detail,
        `The body does not match the schema: maxActivations must be an integer from 1 to 1000000 or null; got ${JSON.stringify(maxActivations)}.`,
      )
      assert.deepEqual(problem.errors, [
        {
          pointer: '#/maxActivations',
          detail: `maxActivations must be an integer from 1 to 1000000 or null; got ${JSON.stringify(maxActivations)}`,
        },
      ])
    }
  })

  it('answers 400 validation_failed for a body that is not a JSON object', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const payload of ['[]', '"Acme"', '42', 'null']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/products',
        headers: { ...headers, 'content-type': 'application/json' },
        payload,
      })

      assertProblem(res, 400, 'validation_failed')
    }
  })

  it('lists every field problem at once', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/api-keys',
      headers,
      payload: { name: '', role: 'owner', extra: 1 },
    })

    const problem = assertProblem(res, 400, 'validation_failed')
    assert.deepEqual(problem.errors?.map((error) => error.pointer).sort(), ['#/extra', '#/name', '#/role'])
  })

  it('bounds the field problems it reports for a body full of unknown fields', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    const payload = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`f${i}`, 0]))

    const res = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers,
      payload: { name: 'Acme', ...payload },
    })

    const problem = assertProblem(res, 400, 'validation_failed')
    assert.equal(problem.errors?.length, 20)
    assert.match(problem.detail, /; and 2980 more\.$/)
    assert.ok(res.body.length < 4096, `${res.body.length} bytes`)
  })

  it('answers 400 validation_failed with a pointer for a bad query parameter', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const bad = await app.inject({ method: 'GET', url: '/api/v0/products?limit=0', headers })
    assert.deepEqual(
      assertProblem(bad, 400, 'validation_failed').errors?.map((error) => error.pointer),
      ['#/limit'],
    )

    const unknown = await app.inject({ method: 'GET', url: '/api/v0/products?colour=red', headers })
    assert.deepEqual(assertProblem(unknown, 400, 'validation_failed').errors, [
      { pointer: '#/colour', detail: 'unknown parameter "colour"' },
    ])
  })

  it('reads numeric query parameters from their text', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/api/v0/products?limit=5&page=0', headers })

    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().limit, 5)
  })

  it('answers 400 validation_failed for a malformed id in the path', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/api/v0/products/lic_notaproduct', headers })

    assert.deepEqual(
      assertProblem(res, 400, 'validation_failed').errors?.map((error) => error.pointer),
      ['#/id'],
    )
  })

  it('answers an overlong id in the path with a 400 problem', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: `/api/v0/products/prd_${'x'.repeat(500)}`, headers })

    assert.equal(res.statusCode, 400, res.body)
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/)
    assert.equal(res.json().requestId, res.headers['request-id'])
  })

  it('answers a path that is not valid percent-encoding with a 400 bad_request problem', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/api/v0/products/prd_%E0%A4%A', headers })

    assertProblem(res, 400, 'bad_request')
  })

  it('answers 404 route_not_found for an unknown route, with or without a key', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const request of [
      { method: 'GET', url: '/api/v0/nothing-here', headers },
      { method: 'GET', url: '/api/v0/nothing-here' },
      { method: 'GET', url: '/nothing-here?x=1' },
      { method: 'GET', url: '/api/v1/licenses', headers },
      { method: 'PUT', url: '/api/v0/licenses/lic_x/nothing', headers },
    ] as const) {
      const res = await app.inject(request)

      const problem = assertProblem(res, 404, 'route_not_found')
      assert.equal(problem.detail, `No route ${request.method} ${request.url.split('?')[0]}.`)
      assert.equal(res.headers.allow, undefined)
    }
  })

  it('answers 405 method_not_allowed with an Allow header for a wrong method on a known path', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    for (const [method, url, allow] of [
      ['PUT', '/api/v0/licenses/lic_7fQx2mNc4RtYp9LkWv3bHs', 'GET, HEAD, PATCH'],
      ['PUT', '/v0/licenses/lic_7fQx2mNc4RtYp9LkWv3bHs?x=1', 'GET, HEAD, PATCH'],
      ['DELETE', '/api/v0/products', 'GET, HEAD, POST'],
      ['PUT', '/api/v0/licenses/validate', 'POST'],
      ['GET', '/v0/licenses/lic_7fQx2mNc4RtYp9LkWv3bHs/revoke', 'POST'],
      ['DELETE', '/api/v0/licenses/lic_7fQx2mNc4RtYp9LkWv3bHs/activations', 'GET, HEAD, POST'],
      ['PATCH', '/api/v0/activations/act_x', 'GET, HEAD, DELETE'],
      ['POST', '/healthz', 'GET, HEAD'],
    ] as const) {
      for (const auth of [headers, {}]) {
        const res = await app.inject({ method, url, headers: auth })

        const problem = assertProblem(res, 405, 'method_not_allowed')
        assert.equal(res.headers.allow, allow, `${method} ${url}`)
        assert.equal(problem.detail, `${url.split('?')[0]} does not answer ${method}; it answers ${allow}.`)
      }
    }
  })

  it('reads a bodiless POST or PATCH as {} whatever its Content-Type says', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId },
    })
    const id = created.json().id

    for (const contentType of [
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/xml',
    ]) {
      const revoke = await app.inject({
        method: 'POST',
        url: `/api/v0/licenses/${id}/revoke`,
        headers: { ...headers, 'content-type': contentType },
      })
      const update = await app.inject({
        method: 'PATCH',
        url: `/v0/licenses/${id}`,
        headers: { ...headers, 'content-type': contentType, 'content-length': '0' },
      })
      const create = await app.inject({
        method: 'POST',
        url: '/api/v0/products',
        headers: { ...headers, 'content-type': contentType },
      })

      assert.equal(revoke.statusCode, 200, revoke.body)
      assert.equal(revoke.json().status, 'revoked')
      assert.equal(update.statusCode, 200, update.body)
      const problem = assertProblem(create, 400, 'validation_failed') // told what is missing, not that a body is
      assert.deepEqual(
        problem.errors?.map((error) => error.pointer),
        ['#/name'],
      )
    }
  })

  it('reads an empty chunked JSON body as {} and still refuses a blank non-JSON one', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers,
      payload: { productId },
    })

    const json = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${created.json().id}/revoke`,
      headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      payload: ' ',
    })
    const xml = await app.inject({
      method: 'POST',
      url: `/api/v0/licenses/${created.json().id}/revoke`,
      headers: { ...headers, 'content-type': 'application/xml' },
      payload: ' ',
    })

    assert.equal(json.statusCode, 200, json.body)
    assertProblem(xml, 415, 'unsupported_media_type')
  })

  it('sets a distinct Request-Id header on every response: success, problem and unknown route', async (t) => {
    const { app, headers } = await buildTestApp(t, database)

    const responses = [
      await app.inject({ method: 'GET', url: '/api/v0/products', headers }),
      await app.inject({ method: 'GET', url: '/v0/products', headers }),
      await app.inject({ method: 'GET', url: '/healthz' }),
      await app.inject({ method: 'GET', url: '/api/v0/products' }),
      await app.inject({ method: 'GET', url: '/api/v0/products/prd_unknown', headers }),
      await app.inject({ method: 'GET', url: '/api/v0/nothing-here', headers }),
    ]

    const ids = responses.map((res) => String(res.headers['request-id']))
    for (const id of ids) {
      assert.match(id, /^req_[0-9A-Za-z]{22}$/)
    }
    assert.equal(new Set(ids).size, ids.length)
    for (const res of responses.slice(3)) {
      assert.equal(res.json().requestId, res.headers['request-id'])
    }
  })

  it('answers 500 internal_error with a generic detail when the database is gone', async (t) => {
    const { app, headers, connection } = await buildTestApp(t, database)
    await app.ready()
    // The pool, not connection.close(): the test database still drops its schema afterwards.
    await connection.db.destroy()

    const res = await app.inject({ method: 'GET', url: '/api/v0/products', headers })

    const problem = assertProblem(res, 500, 'internal_error')
    assert.equal(problem.detail, genericDetail)
    assert.deepEqual(Object.keys(problem).sort(), ['code', 'detail', 'requestId', 'status', 'title', 'type'])
  })

  it('answers 500 internal_error without SQL or a stack when a query fails', async (t) => {
    const { app, headers, connection } = await buildTestApp(t, database)
    await sql`drop table product_keys`.execute(connection.db)

    const res = await app.inject({ method: 'GET', url: '/api/v0/products', headers })

    const problem = assertProblem(res, 500, 'internal_error')
    assert.equal(problem.detail, genericDetail)
    assert.doesNotMatch(res.body, /product_keys|select|sqlite|relation|\bat\b|\.ts|\.js/i)
  })

  it('logs the whole error of a 500 under its request id, with the Authorization header redacted', async (t) => {
    const connection = await database.open()
    const lines: string[] = []
    const { app, services } = buildApp({
      db: connection.db,
      clock: new FixedClock(),
      secretKeys: deriveSecretKeys('test-master-secret-with-at-least-32-characters'),
      logger: { ...loggerOptions('info'), stream: { write: (line: string) => lines.push(line) } },
    })
    t.after(async () => {
      await app.close()
      await connection.close()
    })
    await services.apiKeys.bootstrapAdmin(testAdminSecret)
    const admin = await services.apiKeys.authenticate(testAdminSecret)
    assert.ok(admin)
    await services.products.create(admin, { name: 'Acme' })
    await sql`drop table product_keys`.execute(connection.db)

    const res = await app.inject({
      method: 'GET',
      url: '/api/v0/products',
      headers: { authorization: `Bearer ${testAdminSecret}` },
    })

    assertProblem(res, 500, 'internal_error')
    const logged = lines.map((line) => JSON.parse(line))
    const failure = logged.find((entry) => entry.msg === 'request failed')
    assert.ok(failure, lines.join(''))
    assert.equal(failure.reqId, res.headers['request-id'])
    assert.match(failure.err.message, /product_keys/)
    assert.ok(!lines.join('').includes(testAdminSecret), 'the API key is in the log')
  })
})
