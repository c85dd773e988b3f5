import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { buildTestApp, productKeyHeaders, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase, sqliteTestDatabase } from '../../testing/each-database.js'
import { createLicense, expectInvalidField, expectProblem, listLicenses } from '../../testing/licenses.js'
import { idempotencyLeaseMs, idempotencyRetentionMs, requestHash } from '../idempotency.js'
import { type IdempotencyKeysTable, KyselyIdempotencyStore } from '../kysely-idempotency-store.js'

type Headers = Record<string, string>

const post = (test: TestApp, url: string, payload: object, headers: Headers) =>
  test.app.inject({ method: 'POST', url, headers: { ...test.headers, ...headers }, payload })

const createWithKey = (test: TestApp, key: string, body: object = { productId: test.productId }) =>
  post(test, '/api/v0/licenses', body, { 'idempotency-key': key })

/** What another process does first with the same request: claims `key` for it, now, for one lease. */
async function claimElsewhere(test: TestApp, key: string, body: object): Promise<void> {
  const now = test.clock.now()
  await new KyselyIdempotencyStore(test.connection.db).claim(
    {
      apiKeyId: test.admin.apiKeyId,
      key,
      requestHash: requestHash({ method: 'POST', url: '/api/v0/licenses', body }),
      requestId: 'req_elsewhere',
      createdAt: now,
      expiresAt: new Date(now.getTime() + idempotencyLeaseMs),
    },
    now,
  )
}

function assertReplayOf(replay: LightMyRequestResponse, first: LightMyRequestResponse): void {
  assert.equal(replay.statusCode, first.statusCode, replay.body)
  assert.equal(replay.body, first.body)
  assert.equal(replay.headers['content-type'], first.headers['content-type'])
  assert.equal(replay.headers['idempotent-replayed'], 'true')
  assert.equal(first.headers['idempotent-replayed'], undefined)
}

describeEachDatabase('Idempotency-Key on POST requests', (database) => {
  it('replays the first response, marked Idempotent-Replayed: true, for a retry of the same request', async (t) => {
    const test = await buildTestApp(t, database)

    const first = await createWithKey(test, 'import-row-1')
    const retry = await createWithKey(test, 'import-row-1')

    assert.equal(first.statusCode, 201, first.body)
    assertReplayOf(retry, first)
    assert.match(String(retry.headers['request-id']), /^req_/)
    assert.notEqual(retry.headers['request-id'], first.headers['request-id'])
    assert.equal((await listLicenses(test.app, test.headers)).totalCount, 1)
  })

  it('treats a body with other spacing or key order as the same request', async (t) => {
    const test = await buildTestApp(t, database)
    const body = { productId: test.productId, maxActivations: 3 }
    const first = await createWithKey(test, 'k', body)

    const retry = await test.app.inject({
      method: 'POST',
      url: '/api/v0/licenses',
      headers: { ...test.headers, 'idempotency-key': 'k', 'content-type': 'application/json' },
      payload: `{ "maxActivations": 3,\n  "productId": "${test.productId}" }`,
    })

    assertReplayOf(retry, first)
  })

  it('replays a refusal (4xx) even after the cause is gone', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, { productId: test.productId })
    await post(test, `/api/v0/licenses/${license.id}/revoke`, {}, {})
    const token = () => post(test, `/api/v0/licenses/${license.id}/tokens`, {}, { 'idempotency-key': 'tok' })

    const first = await token()
    await post(test, `/api/v0/licenses/${license.id}/reinstate`, {}, {})
    const retry = await token()

    expectProblem(first, 409, 'license_not_active')
    assertReplayOf(retry, first)
    assert.equal((await token()).statusCode, 409, 'still replayed')
    assert.equal((await post(test, `/api/v0/licenses/${license.id}/tokens`, {}, {})).statusCode, 201)
  })

  it('replays a response without a body (204)', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, { productId: test.productId })
    const machine = { key: license.key, productId: test.productId, fingerprint: 'machine-a' }
    await post(test, '/api/v0/licenses/activate', machine, {})
    const deactivate = () => post(test, '/api/v0/licenses/deactivate', machine, { 'idempotency-key': 'd' })

    const first = await deactivate()
    const retry = await deactivate()

    assert.equal(first.statusCode, 204, first.body)
    assert.equal(retry.statusCode, 204, retry.body)
    assert.equal(retry.body, '')
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    expectProblem(await post(test, '/api/v0/licenses/deactivate', machine, {}), 404, 'activation_not_found')
  })

  it('answers 422 idempotency_key_reused for the same key with another body or path', async (t) => {
    const test = await buildTestApp(t, database)
    const first = await createWithKey(test, 'k', { productId: test.productId, maxActivations: 1 })

    const otherBody = await createWithKey(test, 'k', { productId: test.productId, maxActivations: 2 })
    const otherPath = await post(test, '/api/v0/products', { name: 'P' }, { 'idempotency-key': 'k' })
    const otherPrefix = await post(
      test,
      '/v0/licenses',
      { productId: test.productId, maxActivations: 1 },
      {
        'idempotency-key': 'k',
      },
    )

    assert.equal(first.statusCode, 201, first.body)
    for (const res of [otherBody, otherPath, otherPrefix]) {
      expectProblem(res, 422, 'idempotency_key_reused')
      assert.equal(res.headers['idempotent-replayed'], undefined)
    }
    assert.equal((await listLicenses(test.app, test.headers)).totalCount, 1)
  })

  it('answers 409 idempotency_key_in_progress while another request (any process) holds the key', async (t) => {
    const test = await buildTestApp(t, database)
    const body = { productId: test.productId }
    await claimElsewhere(test, 'k', body)

    const retry = await createWithKey(test, 'k', body)
    const other = await createWithKey(test, 'k', { productId: test.productId, maxActivations: 5 })

    expectProblem(retry, 409, 'idempotency_key_in_progress')
    expectProblem(other, 422, 'idempotency_key_reused')
    assert.equal((await listLicenses(test.app, test.headers)).totalCount, 0)
  })

  it('runs the request when the claim holding the key outlived its lease (its process died)', async (t) => {
    const test = await buildTestApp(t, database)
    const body = { productId: test.productId }
    await claimElsewhere(test, 'k', body)

    test.clock.advance(idempotencyLeaseMs - 1)
    const during = await createWithKey(test, 'k', body)
    test.clock.advance(1)
    const after = await createWithKey(test, 'k', body)
    const retry = await createWithKey(test, 'k', body)

    expectProblem(during, 409, 'idempotency_key_in_progress')
    assert.equal(after.statusCode, 201, after.body)
    assertReplayOf(retry, after)
  })

  it('for two concurrent requests with one key, runs one and answers the other 409 or with the replay', async (t) => {
    const test = await buildTestApp(t, database)

    const [a, b] = await Promise.all([createWithKey(test, 'same'), createWithKey(test, 'same')])

    const created = [a, b].filter(
      (res) => res.statusCode === 201 && res.headers['idempotent-replayed'] === undefined,
    )
    assert.equal(created.length, 1, `${a.statusCode} ${a.body}\n${b.statusCode} ${b.body}`)
    const [other] = [a, b].filter((res) => res !== created[0])
    if (other?.statusCode === 409) {
      expectProblem(other, 409, 'idempotency_key_in_progress')
    } else {
      assertReplayOf(other ?? assert.fail(), created[0] ?? assert.fail())
    }
    assert.equal((await listLicenses(test.app, test.headers)).totalCount, 1)
  })

  it('forgets a response after 24 hours: the key then runs a request anew', async (t) => {
    const test = await buildTestApp(t, database)
    const first = await createWithKey(test, 'k')

    test.clock.advance(idempotencyRetentionMs - 1)
    const within = await createWithKey(test, 'k')
    test.clock.advance(1)
    const after = await createWithKey(test, 'k', { productId: test.productId, maxActivations: 7 })

    assertReplayOf(within, first)
    assert.equal(after.statusCode, 201, after.body)
    assert.equal(after.headers['idempotent-replayed'], undefined)
    assert.equal(after.json().maxActivations, 7)
    assert.equal((await listLicenses(test.app, test.headers)).totalCount, 2)
  })

  it('keeps the keys of each API key apart', async (t) => {
    const test = await buildTestApp(t, database)
    const product = await productKeyHeaders(test.app, test.headers, test.productId)

    const asAdmin = await createWithKey(test, 'k')
    const asProduct = await post(
      test,
      '/api/v0/licenses',
      { productId: test.productId },
      {
        ...product,
        'idempotency-key': 'k',
      },
    )

    assert.equal(asAdmin.statusCode, 201, asAdmin.body)
    assert.equal(asProduct.statusCode, 201, asProduct.body)
    assert.equal(asProduct.headers['idempotent-replayed'], undefined)
    assert.notEqual(asProduct.json().id, asAdmin.json().id)
  })

  it('stores a response holding a secret or token encrypted, never in clear, and still replays it', async (t) => {
    const test = await buildTestApp(t, database, { webhooks: { allowHttp: true, allowPrivate: true } })
    const license = await createLicense(test.app, test.headers, { productId: test.productId })
    const endpoint = await post(
      test,
      '/api/v0/webhook-endpoints',
      { url: 'https://example.com/hook', eventTypes: ['*'] },
      { 'idempotency-key': 'endpoint' },
    )
    const requests: [string, object, (body: { secret?: string; token?: string }) => string][] = [
      ['/api/v0/api-keys', { name: 'ci', role: 'admin' }, (body) => body.secret ?? ''],
      [`/api/v0/webhook-endpoints/${endpoint.json().id}/rotate-secret`, {}, (body) => body.secret ?? ''],
      [`/api/v0/licenses/${license.id}/tokens`, {}, (body) => body.token ?? ''],
    ]
    const answers = [endpoint]
    for (const [url, payload] of requests) {
      answers.push(await post(test, url, payload, { 'idempotency-key': url }))
    }
    const secrets = [
      endpoint.json().secret,
      ...requests.map(([, , secretOf], i) => secretOf(answers[i + 1]?.json() ?? {})),
    ]
    assert.ok(
      secrets.every((secret) => typeof secret === 'string' && secret.length > 20),
      String(secrets),
    )

    const stored = await test.connection.db
      .withTables<{ idempotency_keys: IdempotencyKeysTable }>()
      .selectFrom('idempotency_keys')
      .select(['key', 'response_body'])
      .execute()
    assert.equal(stored.length, 4)
    for (const row of stored) {
      assert.match(row.response_body ?? '', /^keyturn-encrypted:v1:[A-Za-z0-9_-]+$/, row.key)
      for (const secret of secrets) {
        assert.equal(row.response_body?.includes(secret.slice(-16)), false, 'no secret in clear')
      }
    }
    const retries = [
      await post(
        test,
        '/api/v0/webhook-endpoints',
        { url: 'https://example.com/hook', eventTypes: ['*'] },
        { 'idempotency-key': 'endpoint' },
      ),
    ]
    for (const [url, payload] of requests) {
      retries.push(await post(test, url, payload, { 'idempotency-key': url }))
    }
    for (const [i, retry] of retries.entries()) {
      const first = answers[i]
      assert.ok(first !== undefined)
      assertReplayOf(retry, first)
    }
  })

  it('answers 409 idempotency_key_unrecoverable when a stored secret cannot be read (moved to another key)', async (t) => {
    const test = await buildTestApp(t, database)
    const body = { name: 'ci', role: 'admin' }
    const first = await post(test, '/api/v0/api-keys', body, { 'idempotency-key': 'a' })
    await post(test, '/api/v0/api-keys', body, { 'idempotency-key': 'b' })
    const db = test.connection.db.withTables<{ idempotency_keys: IdempotencyKeysTable }>()
    const a = await db
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('key', '=', 'a')
      .executeTakeFirstOrThrow()
    // Someone who can write the table copies key a's encrypted answer to key b, to read it as b.
    await db
      .updateTable('idempotency_keys')
      .set({ response_body: a.response_body })
      .where('key', '=', 'b')
      .execute()

    const retry = await post(test, '/api/v0/api-keys', body, { 'idempotency-key': 'b' })

    expectProblem(retry, 409, 'idempotency_key_unrecoverable')
    assert.equal(retry.body.includes(first.json().secret), false)
  })

  it('does not store a server error (5xx): the retry runs again', async (t) => {
    const test = await buildTestApp(t, database)
    const { db } = test.connection
    await db.schema.alterTable('licenses').renameTo('licenses_away').execute()

    const failed = await createWithKey(test, 'k')
    await db.schema.alterTable('licenses_away').renameTo('licenses').execute()
    const retry = await createWithKey(test, 'k')

    expectProblem(failed, 500, 'internal_error')
    assert.equal(retry.statusCode, 201, retry.body)
    assert.equal(retry.headers['idempotent-replayed'], undefined)
    assert.equal((await listLicenses(test.app, test.headers)).totalCount, 1)
  })

  it('answers 400 validation_failed for a key over 255 characters, or an empty one', async (t) => {
    const test = await buildTestApp(t, database)

    const longest = await createWithKey(test, 'k'.repeat(255))
    const tooLong = await createWithKey(test, 'k'.repeat(256))
    const empty = await createWithKey(test, '')

    assert.equal(longest.statusCode, 201, longest.body)
    expectInvalidField(tooLong, '#/idempotency-key')
    expectInvalidField(empty, '#/idempotency-key')
    assert.equal((await listLicenses(test.app, test.headers)).totalCount, 1)
  })

  it('does not record a request the schema refuses, so a corrected retry may use the key', async (t) => {
    const test = await buildTestApp(t, database)

    const invalid = await createWithKey(test, 'k', { productId: test.productId, maxActivations: 0 })
    const corrected = await createWithKey(test, 'k', { productId: test.productId, maxActivations: 1 })

    expectInvalidField(invalid, '#/maxActivations')
    assert.equal(corrected.statusCode, 201, corrected.body)
  })

  it('ignores the header on methods other than POST', async (t) => {
    const test = await buildTestApp(t, database)
    const license = await createLicense(test.app, test.headers, { productId: test.productId })
    const update = (maxActivations: number) =>
      test.app.inject({
        method: 'PATCH',
        url: `/api/v0/licenses/${license.id}`,
        headers: { ...test.headers, 'idempotency-key': 'k' },
        payload: { maxActivations },
      })

    const first = await update(2)
    const second = await update(3)

    assert.equal(first.json().maxActivations, 2)
    assert.equal(second.json().maxActivations, 3)
    assert.equal(second.headers['idempotent-replayed'], undefined)
  })
})

describe('Idempotency-Key in the OpenAPI document', () => {
  it('is an optional header of every POST operation, with its 409 and 422 problems, and of no other', async (t) => {
    const { app } = await buildTestApp(t, sqliteTestDatabase())
    await app.ready()
    const document = app.swagger() as { paths: Record<string, Record<string, Operation>> } // the OpenAPI 3.1 object

    // Payment providers' receivers are not the API's: they deduplicate on the provider's event id.
    // The dashboard's sign-in routes (/operator/…, outside /api/v0) are not the API's either.
    const operations = Object.entries(document.paths)
      .filter(([path]) => !path.startsWith('/operator/'))
      .flatMap(([, item]) => Object.entries(item))
      .filter(([, operation]) => operation.operationId !== 'receiveIntegrationWebhook')
    for (const [method, operation] of operations) {
      const header = operation.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key')
      if (method !== 'post') {
        assert.equal(header, undefined, operation.operationId)
        continue
      }
      assert.equal(header?.required, false, operation.operationId)
      assert.equal(header?.schema?.maxLength, 255, operation.operationId)
      assert.match(String(operation.responses?.['409']?.description), /idempotency_key_in_progress/)
      assert.match(String(operation.responses?.['422']?.description), /idempotency_key_reused/)
    }
    assert.ok(operations.some(([method]) => method === 'post'))
  })
})

interface Operation {
  operationId?: string
  parameters?: { in: string; name: string; required?: boolean; schema?: { maxLength?: number } }[]
  responses?: Record<string, { description?: string }>
}
