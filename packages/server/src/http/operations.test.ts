import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { it } from 'node:test'
import { buildApp } from '../app.js'
import { deriveSecretKeys } from '../core/secrets.js'
import { buildTestApp, testAdminSecret } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { FixedClock } from '../testing/fixed-clock.js'
import { loggerOptions } from './logger.js'

const secretKeys = deriveSecretKeys('test-master-secret-with-at-least-32-characters')

describeEachDatabase('GET /healthz and /readyz', (database) => {
  it('answers 200 ok on /healthz', async (t) => {
    const { app } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/healthz' })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { status: 'ok' })
    assert.match(String(res.headers['request-id']), /^req_/)
  })

  it('answers 200 ok on /readyz while the database answers', async (t) => {
    const { app } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/readyz' })

    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { status: 'ok' })
  })

  it('answers 503 service_unavailable on /readyz once the database is gone, and 200 on /healthz', async (t) => {
    const connection = await database.open()
    const { app } = buildApp({ db: connection.db, clock: new FixedClock(), secretKeys, logger: false })
    t.after(() => app.close())
    await connection.close()

    const ready = await app.inject({ method: 'GET', url: '/readyz' })
    const healthy = await app.inject({ method: 'GET', url: '/healthz' })

    assert.equal(ready.statusCode, 503, ready.body)
    assert.equal(ready.headers['content-type'], 'application/problem+json; charset=utf-8')
    const { requestId, ...problem } = ready.json()
    assert.deepEqual(problem, {
      type: '/problems/service_unavailable',
      title: 'Service unavailable',
      status: 503,
      detail: 'The database does not answer.',
      code: 'service_unavailable',
      failing: ['database'],
    })
    assert.equal(requestId, ready.headers['request-id'])
    assert.equal(healthy.statusCode, 200, 'the process is up even when the database is not')
  })
})

describeEachDatabase('GET /metrics', (database) => {
  it('counts requests by method, route pattern and status in Prometheus text format', async (t) => {
    const { app, headers } = await buildTestApp(t, database)
    await app.inject({ method: 'GET', url: '/api/v0/licenses', headers })
    await app.inject({ method: 'GET', url: '/api/v0/licenses', headers })
    await app.inject({ method: 'GET', url: '/api/v0/licenses/lic_doesNotExist', headers })
    await app.inject({ method: 'GET', url: '/wp-login.php' })

    const res = await app.inject({ method: 'GET', url: '/metrics' })

    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/)
    const lines = res.body.split('\n')
    for (const expected of [
      '# TYPE keyturn_http_requests_total counter',
      'keyturn_http_requests_total{method="GET",route="/api/v0/licenses",status="200"} 2',
      'keyturn_http_requests_total{method="GET",route="/api/v0/licenses/:id",status="404"} 1',
      'keyturn_http_requests_total{method="GET",route="unmatched",status="404"} 1',
      '# TYPE keyturn_http_request_duration_seconds histogram',
      'keyturn_http_request_duration_seconds_count{method="GET",route="/api/v0/licenses"} 2',
    ]) {
      assert.ok(lines.includes(expected), `missing ${expected} in:\n${res.body}`)
    }
    assert.equal(res.body.includes('wp-login'), false, 'unknown URLs create no series')
  })

  it('counts validations by result, activations by outcome, tokens issued and idempotent replays', async (t) => {
    const { app, headers, productId } = await buildTestApp(t, database)
    const post = (url: string, payload: object, extra: Record<string, string> = {}) =>
      app.inject({ method: 'POST', url, headers: { ...headers, ...extra }, payload })
    const license = (await post('/api/v0/licenses', { productId, maxActivations: 1 })).json()
    const other = (await post('/api/v0/licenses', { productId })).json()
    const validate = (key: string) => post('/v0/licenses/validate', { key, productId })

    const statuses = [
      (await validate(license.key)).statusCode,
      (await validate(license.key)).statusCode,
      (await validate('AAAAA-AAAAA-AAAAA-AAAAA-AAAAA')).statusCode,
      (await post(`/api/v0/licenses/${license.id}/activations`, { fingerprint: 'machine-1' })).statusCode,
      (await post(`/api/v0/licenses/${license.id}/activations`, { fingerprint: 'machine-1' })).statusCode,
      (await post('/api/v0/licenses/activate', { key: license.key, productId, fingerprint: 'machine-2' }))
        .statusCode,
      (await post(`/api/v0/licenses/${license.id}/tokens`, {}, { 'idempotency-key': 'token-1' })).statusCode,
      (await post(`/api/v0/licenses/${license.id}/tokens`, {}, { 'idempotency-key': 'token-1' })).statusCode,
      (await post(`/api/v0/licenses/${other.id}/revoke`, {})).statusCode,
      (await validate(other.key)).statusCode,
    ]
    const res = await app.inject({ method: 'GET', url: '/metrics' })

    assert.deepEqual(statuses, [200, 200, 404, 201, 200, 409, 201, 201, 200, 200])
    const lines = res.body.split('\n')
    for (const expected of [
      'keyturn_license_validations_total{result="valid"} 2',
      'keyturn_license_validations_total{result="not_found"} 1',
      'keyturn_license_validations_total{result="revoked"} 1',
      'keyturn_activations_total{outcome="created"} 1',
      'keyturn_activations_total{outcome="existing"} 1',
      'keyturn_activations_total{outcome="refused"} 1',
      'keyturn_license_tokens_issued_total 1',
      'keyturn_idempotent_replays_total{route="/api/v0/licenses/:id/tokens"} 1',
    ]) {
      assert.ok(lines.includes(expected), `missing ${expected} in:\n${res.body}`)
    }
  })

  it('includes the default process and Node.js metrics', async (t) => {
    const { app } = await buildTestApp(t, database)

    const res = await app.inject({ method: 'GET', url: '/metrics' })

    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
      'nodejs_version_info',
    ]) {
      assert.match(res.body, new RegExp(`^# TYPE ${name} `, 'm'), name)
    }
  })

  it('keeps each app its own counts', async (t) => {
    const first = await buildTestApp(t, database)
    const second = await buildTestApp(t, database)
    await first.app.inject({ method: 'GET', url: '/healthz' })

    const res = await second.app.inject({ method: 'GET', url: '/metrics' })

    assert.equal(res.body.includes('route="/healthz"'), false, res.body)
  })
})

describeEachDatabase('request logs', (database) => {
  it('are JSON lines with the request id and never contain a bearer secret', async (t) => {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean))
        done()
      },
    })
    const connection = await database.open()
    const { app, services } = buildApp({
      db: connection.db,
      clock: new FixedClock(),
      secretKeys,
      logger: { ...loggerOptions('trace'), stream },
    })
    t.after(async () => {
      await app.close()
      await connection.close()
    })
    await services.apiKeys.bootstrapAdmin(testAdminSecret)
    const admin = await services.apiKeys.authenticate(testAdminSecret)
    const wrongSecret = 'kt_admin_not-a-key-but-still-a-secret-0000'

    const ok = await app.inject({
      method: 'POST',
      url: '/api/v0/products',
      headers: { authorization: `Bearer ${testAdminSecret}`, cookie: 'session=cookie-secret' },
      payload: { name: 'Logged Product' },
    })
    const refused = await app.inject({
      method: 'GET',
      url: '/v0/licenses',
      headers: { authorization: `Bearer ${wrongSecret}` },
    })
    app.log.info({ headers: { authorization: `Bearer ${testAdminSecret}` } }, 'a careless log call')

    assert.equal(ok.statusCode, 201, ok.body)
    assert.equal(refused.statusCode, 401, refused.body)
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    const perRequest = entries.filter((entry) => entry.reqId !== undefined)
    assert.deepEqual(
      perRequest.map(({ msg, reqId, method, route, status, apiKeyId }) => ({
        msg,
        reqId,
        method,
        route,
        status,
        apiKeyId,
      })),
      [
        {
          msg: 'request completed',
          reqId: ok.headers['request-id'],
          method: 'POST',
          route: '/api/v0/products',
          status: 201,
          apiKeyId: admin?.apiKeyId,
        },
        {
          msg: 'request completed',
          reqId: refused.headers['request-id'],
          method: 'GET',
          route: '/api/v0/licenses',
          status: 401,
          apiKeyId: undefined,
        },
      ],
      'one line per request',
    )
    assert.ok(perRequest.every((entry) => typeof entry.durationMs === 'number'))
    for (const secret of [testAdminSecret, wrongSecret, 'cookie-secret']) {
      assert.equal(
        lines.some((line) => line.includes(secret)),
        false,
        `${secret} appears in:\n${lines.join('\n')}`,
      )
    }
    assert.ok(
      lines.some((line) => line.includes('[redacted]')),
      lines.join('\n'),
    )
  })

  it('leave out probes and scrapes below warn', async (t) => {
    const lines: string[] = []
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'))
        done()
      },
    })
    const connection = await database.open()
    const { app } = buildApp({
      db: connection.db,
      clock: new FixedClock(),
      secretKeys,
      logger: { ...loggerOptions('info'), stream },
    })
    t.after(async () => {
      await app.close()
      await connection.close()
    })

    for (const url of ['/healthz', '/readyz', '/metrics']) {
      const res = await app.inject({ method: 'GET', url })
      assert.equal(res.statusCode, 200, res.body)
    }

    assert.deepEqual(lines, [])
  })
})
