import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { EventResource, Paginated } from '@keyturn/protocol'
import { buildTestApp, createProduct, productKeyHeaders, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'
import type { AuthHeaders } from '../../testing/licenses.js'
import { assertProblem } from '../../testing/problems.js'
import { send } from '../../testing/requests.js'

async function listEvents(
  test: TestApp,
  query = '',
  headers: AuthHeaders = test.headers,
): Promise<Paginated<EventResource>> {
  const res = await send(test, 'GET', `/events${query === '' ? '' : `?${query}`}`, undefined, headers)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

async function clientKeyHeaders(test: TestApp): Promise<AuthHeaders> {
  const res = await send(test, 'POST', '/api-keys', {
    name: 'app',
    role: 'client',
    productId: test.productId,
  })
  assert.equal(res.statusCode, 201, res.body)
  return { authorization: `Bearer ${res.json().secret}` }
}

describeEachDatabase('GET /api/v0/events and /events/:id', (database) => {
  it('records each change with its actor, request id and the resource as the API returned it', async (t) => {
    const test = await buildTestApp(t, database)
    const created = await send(test, 'POST', '/licenses', { productId: test.productId, maxActivations: 2 })
    const { id, key } = created.json()
    await send(test, 'PATCH', `/licenses/${id}`, { maxActivations: 3 })
    const activated = await send(test, 'POST', `/licenses/${id}/activations`, { fingerprint: 'm1' })
    await send(test, 'DELETE', `/activations/${activated.json().id}`)
    await send(test, 'POST', `/licenses/${id}/revoke`)
    await send(test, 'POST', `/licenses/${id}/reinstate`)
    await send(test, 'POST', `/licenses/${id}/tokens`)
    await send(test, 'POST', `/products/${test.productId}/suspend`)
    await send(test, 'POST', `/products/${test.productId}/resume`)
    await send(test, 'PATCH', `/products/${test.productId}`, { name: 'Renamed' })
    await send(test, 'POST', `/products/${test.productId}/keys/rotate`)
    const apiKey = await send(test, 'POST', '/api-keys', { name: 'k', role: 'admin' })
    await send(test, 'DELETE', `/api-keys/${apiKey.json().id}`)
    await send(test, 'POST', '/licenses/validate', { key, productId: test.productId })

    const page = await listEvents(test, 'limit=100&sort=occurredAt:asc')
    assert.deepEqual(
      page.data.map((event) => event.type),
      [
        'product.created',
        'license.created',
        'license.updated',
        'activation.created',
        'activation.deleted',
        'license.revoked',
        'license.reinstated',
        'license.token_issued',
        'product.suspended',
        'product.resumed',
        'product.updated',
        'product.key_rotated',
        'api_key.created',
        'api_key.deleted',
      ],
      'validation outcomes are not recorded by default',
    )
    const licenseCreated = page.data[1]
    assert.deepEqual(licenseCreated, {
      id: licenseCreated?.id,
      object: 'Event',
      type: 'license.created',
      occurredAt: '2030-01-01T00:00:00.000Z',
      productId: test.productId,
      actor: { type: 'apiKey', id: test.admin.apiKeyId, role: 'admin' },
      requestId: created.headers['request-id'],
      data: created.json(),
    })
    const keyCreated = page.data[12]
    assert.equal(keyCreated?.productId, null)
    assert.equal(JSON.stringify(keyCreated).includes(apiKey.json().secret), false, 'never the secret')

    const one = await send(test, 'GET', `/events/${licenseCreated?.id}`)
    assert.equal(one.statusCode, 200, one.body)
    assert.deepEqual(one.json(), licenseCreated)
  })

  it('records validation outcomes when KEYTURN_RECORD_VALIDATIONS is on', async (t) => {
    const test = await buildTestApp(t, database, { recordValidations: true })
    const { id, key } = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    const valid = await send(test, 'POST', '/licenses/validate', { key, productId: test.productId })
    await send(test, 'POST', `/licenses/${id}/revoke`)
    await send(test, 'POST', '/licenses/validate', { key, productId: test.productId })

    const page = await listEvents(
      test,
      'filter=type:in:license.validated|license.validation_failed&sort=occurredAt:asc',
    )
    assert.deepEqual(
      page.data.map((event) => event.type),
      ['license.validated', 'license.validation_failed'],
    )
    assert.deepEqual(page.data[0]?.data, valid.json())
  })

  it('filters by type, productId, actor.type, actor.id and occurredAt', async (t) => {
    const test = await buildTestApp(t, database)
    const other = await createProduct(test.app, test.headers)
    test.clock.advance(60_000)
    await send(test, 'POST', '/licenses', { productId: test.productId })
    await send(test, 'POST', '/licenses', { productId: other })

    assert.equal((await listEvents(test, 'filter=type:eq:license.created')).totalCount, 2)
    assert.equal((await listEvents(test, `filter=productId:eq:${other}`)).totalCount, 2)
    assert.equal((await listEvents(test, `filter=actor.id:eq:${test.admin.apiKeyId}`)).totalCount, 4)
    assert.equal((await listEvents(test, 'filter=actor.type:eq:apiKey')).totalCount, 4)
    assert.equal((await listEvents(test, 'filter=actor.type:in:system|customer')).totalCount, 0)
    assert.equal((await listEvents(test, 'filter=occurredAt:gt:2030-01-01T00:00:30Z')).totalCount, 2)
    assertProblem(await send(test, 'GET', '/events?filter=data:eq:1'), 400, 'invalid_filter')
    const first = await listEvents(test, 'limit=1')
    const rest = await listEvents(test, `starting_after=${first.data[0]?.id}`)
    assert.equal(rest.totalCount, 4)
    assert.equal(rest.data.length, 3)
  })

  it("filters by licenseId: the license's own events, its validations' and its activations', within the key's scope", async (t) => {
    const test = await buildTestApp(t, database, { recordValidations: true })
    const other = await createProduct(test.app, test.headers)
    const license = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    const neighbour = (await send(test, 'POST', '/licenses', { productId: test.productId })).json()
    const foreign = (await send(test, 'POST', '/licenses', { productId: other })).json()
    for (const { id } of [license, neighbour, foreign]) {
      test.clock.advance(1000)
      await send(test, 'POST', `/licenses/${id}/activations`, { fingerprint: 'machine' })
    }
    // A repeat (the machine holds its seat) renews it and records nothing.
    const repeat = await send(test, 'POST', `/licenses/${license.id}/activations`, { fingerprint: 'machine' })
    assert.equal(repeat.statusCode, 200)
    await send(test, 'POST', '/licenses/validate', { key: license.key, productId: test.productId })
    const activation = (await send(test, 'GET', `/licenses/${license.id}/activations`)).json().data[0]
    await send(test, 'DELETE', `/activations/${activation.id}`)
    await send(test, 'POST', `/licenses/${license.id}/revoke`)
    await send(test, 'POST', '/licenses/validate', { key: license.key, productId: test.productId })

    const types = async (query: string, headers: AuthHeaders = test.headers) =>
      (await listEvents(test, `${query}&sort=occurredAt:asc&limit=100`, headers)).data.map(
        (event) => event.type,
      )
    assert.deepEqual(await types(`filter=licenseId:eq:${license.id}`), [
      'license.created',
      'activation.created',
      'license.validated',
      'activation.deleted',
      'license.revoked',
      'license.validation_failed',
    ])
    assert.deepEqual(await types(`filter=licenseId:eq:${neighbour.id},type:eq:activation.created`), [
      'activation.created',
    ])
    const mine = await productKeyHeaders(test.app, test.headers, test.productId)
    assert.deepEqual(await types(`filter=licenseId:eq:${foreign.id}`, mine), [])
    assert.equal((await types(`filter=licenseId:eq:${foreign.id}`)).length, 2)
  })

  it('shows a product key only its product’s events, a client key none', async (t) => {
    const test = await buildTestApp(t, database)
    const other = await createProduct(test.app, test.headers)
    const mine = await productKeyHeaders(test.app, test.headers, test.productId)
    const client = await clientKeyHeaders(test)
    await send(test, 'POST', '/licenses', { productId: other })
    await send(test, 'POST', '/licenses', { productId: test.productId }, mine)

    const page = await listEvents(test, '', mine)
    assert.deepEqual(
      page.data.map((event) => [event.type, event.productId]),
      [
        ['license.created', test.productId],
        ['product.created', test.productId],
      ],
    )
    const all = await listEvents(test, 'limit=100')
    const hidden = all.data.filter((event) => event.productId !== test.productId)
    assert.ok(hidden.some((event) => event.productId === null))
    for (const event of hidden) {
      assertProblem(await send(test, 'GET', `/events/${event.id}`, undefined, mine), 404, 'event_not_found')
    }
    assertProblem(await send(test, 'GET', '/events', undefined, client), 403, 'forbidden')
    assertProblem(await send(test, 'GET', `/events/${page.data[0]?.id}`, undefined, client), 403, 'forbidden')
  })

  it('answers 404 event_not_found for an unknown id, 400 for a malformed one, 401 without a key', async (t) => {
    const test = await buildTestApp(t, database)
    assertProblem(await send(test, 'GET', '/events/evt_unknown'), 404, 'event_not_found')
    assertProblem(await send(test, 'GET', '/events/lic_unknown'), 400, 'validation_failed')
    assertProblem(await test.app.inject({ method: 'GET', url: '/api/v0/events' }), 401, 'unauthenticated')
  })
})
