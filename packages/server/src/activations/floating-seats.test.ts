import assert from 'node:assert/strict'
import { it } from 'node:test'
import { validateLicenseToken } from '@keyturn/client'
import { sql } from 'kysely'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { createLicense, expectProblem } from '../testing/licenses.js'

const minute = 60_000

function byKey(test: TestApp, path: string, body: Record<string, unknown>) {
  return test.app.inject({
    method: 'POST',
    url: `/api/v0/licenses/${path}`,
    headers: test.headers,
    payload: body,
  })
}

/** Stored count and real rows of a license's activations, and how many hold a seat now. */
async function seatCounts(test: TestApp, licenseId: string) {
  const now = test.clock.now().toISOString()
  const { rows } = await sql<{ stored: number | string; rows: number | string; alive: number | string }>`
    select activation_count as stored,
      (select count(*) from activations where license_id = ${licenseId}) as rows,
      (select count(*) from activations where license_id = ${licenseId}
        and (expires_at is null or expires_at > ${now})) as alive
    from licenses where id = ${licenseId}`.execute(test.connection.db)
  const [counts] = rows
  assert.ok(counts)
  return { stored: Number(counts.stored), rows: Number(counts.rows), alive: Number(counts.alive) }
}

describeEachDatabase('floating seats (heartbeatTtl)', (database) => {
  it('gives 3 of 50 contending machines a seat, keeps them while they heartbeat, and gives 3 others the seats once they stop', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, {
      productId,
      maxActivations: 3,
      heartbeatTtl: 600,
    })
    const machines = Array.from({ length: 50 }, (_, n) => `machine-${n}`)
    const contend = async (fingerprints: string[]) => {
      const answers = await Promise.all(
        fingerprints.map((fingerprint) =>
          byKey(test, 'activate', { key: license.key, productId, fingerprint }),
        ),
      )
      const winners = fingerprints.filter((_, n) => answers[n]?.statusCode === 201)
      const statuses = answers.map((answer) => answer.statusCode)
      assert.deepEqual(
        statuses.filter((status) => status !== 201 && status !== 409),
        [],
        answers.map((answer) => answer.body).join('\n'),
      )
      return winners
    }
    const aliveNow = async () => {
      const fetched = await test.app.inject({
        method: 'GET',
        url: `/api/v0/licenses/${license.id}`,
        headers: test.headers,
      })
      const listed = await test.app.inject({
        method: 'GET',
        url: `/api/v0/licenses/${license.id}/activations?limit=100`,
        headers: test.headers,
      })
      assert.equal(fetched.json().activationCount, listed.json().totalCount, listed.body)
      return listed
        .json()
        .data.map((activation: { fingerprint: string }) => activation.fingerprint)
        .sort()
    }

    const holders = await contend(machines)
    assert.equal(holders.length, 3, holders.join(','))
    assert.deepEqual(await aliveNow(), [...holders].sort())

    // Holders heartbeat every 5 minutes for an hour: everyone else stays out.
    for (let step = 0; step < 12; step++) {
      test.clock.advance(5 * minute)
      for (const fingerprint of holders) {
        const beat = await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint })
        assert.equal(beat.statusCode, 200, beat.body)
      }
      assert.deepEqual(await contend(machines.filter((m) => !holders.includes(m)).slice(step, step + 5)), [])
    }
    assert.deepEqual(await aliveNow(), [...holders].sort())

    // The holders stop; ten minutes later their leases have lapsed and the seats go to 3 others.
    test.clock.advance(10 * minute + 1)
    assert.deepEqual(await aliveNow(), [])
    const others = machines.filter((m) => !holders.includes(m))
    const next = await contend(others)
    assert.equal(next.length, 3, next.join(','))
    assert.deepEqual(await aliveNow(), [...next].sort())
    assert.deepEqual(await seatCounts(test, license.id), { stored: 3, rows: 3, alive: 3 })
    const late = await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint: holders[0] })
    expectProblem(late, 404, 'activation_not_found')
  })

  it('answers a heartbeat with the renewed lease, and 404 activation_not_found once it lapsed, by id and by key', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId, app, headers } = test
    const license = await createLicense(app, headers, { productId, maxActivations: 2, heartbeatTtl: 60 })
    const activated = await byKey(test, 'activate', { key: license.key, productId, fingerprint: 'a' })
    assert.equal(activated.statusCode, 201, activated.body)
    assert.equal(activated.json().lastHeartbeatAt, '2030-01-01T00:00:00.000Z')
    assert.equal(activated.json().expiresAt, '2030-01-01T00:01:00.000Z')

    test.clock.advance(45_000)
    const beat = await app.inject({
      method: 'POST',
      url: `/api/v0/activations/${activated.json().id}/heartbeat`,
      headers,
    })
    assert.equal(beat.statusCode, 200, beat.body)
    assert.equal(beat.json().lastHeartbeatAt, '2030-01-01T00:00:45.000Z')
    assert.equal(beat.json().lastSeenAt, '2030-01-01T00:00:45.000Z')
    assert.equal(beat.json().expiresAt, '2030-01-01T00:01:45.000Z')

    test.clock.set('2030-01-01T00:01:45.000Z') // the instant the lease ends: lapsed
    const byId = await app.inject({
      method: 'POST',
      url: `/api/v0/activations/${activated.json().id}/heartbeat`,
      headers,
    })
    expectProblem(byId, 404, 'activation_not_found')
    expectProblem(
      await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint: 'a' }),
      404,
      'activation_not_found',
    )
    expectProblem(
      await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint: 'never' }),
      404,
      'activation_not_found',
    )
    const got = await app.inject({
      method: 'GET',
      url: `/api/v0/activations/${activated.json().id}`,
      headers,
    })
    expectProblem(got, 404, 'activation_not_found')
    expectProblem(
      await byKey(test, 'deactivate', { key: license.key, productId, fingerprint: 'a' }),
      404,
      'activation_not_found',
    )

    const again = await byKey(test, 'activate', { key: license.key, productId, fingerprint: 'a' })
    assert.equal(again.statusCode, 201, again.body)
    assert.notEqual(again.json().id, activated.json().id)
    // The lapsed activation gave way (its seat counted once, its expiry recorded).
    const after = await app.inject({ method: 'GET', url: `/api/v0/licenses/${license.id}`, headers })
    assert.equal(after.json().activationCount, 1)
    const expired = await app.inject({
      method: 'GET',
      url: `/api/v0/events?filter=type:eq:activation.expired`,
      headers,
    })
    assert.deepEqual(
      expired.json().data.map((event: { data: { id: string } }) => event.data.id),
      [activated.json().id],
    )
  })

  it('validates a lapsed fingerprint as not_activated, and a live one as valid', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId } = test
    const license = await createLicense(test.app, test.headers, { productId, heartbeatTtl: 120 })
    await byKey(test, 'activate', { key: license.key, productId, fingerprint: 'a' })
    const validate = () => byKey(test, 'validate', { key: license.key, productId, fingerprint: 'a' })

    test.clock.advance(119_000)
    const live = await validate()
    test.clock.advance(1000)
    const lapsed = await validate()

    assert.deepEqual([live.json().isValid, live.json().reason], [true, null], live.body)
    assert.deepEqual([lapsed.json().isValid, lapsed.json().reason], [false, 'not_activated'], lapsed.body)
    assert.equal(lapsed.json().license.activationCount, 0)
  })

  it('caps a machine-bound token at the lease plus one TTL, and leaves other tokens alone', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId, app, headers } = test
    const license = await createLicense(app, headers, { productId, maxActivations: 2, heartbeatTtl: 3600 })
    await byKey(test, 'activate', { key: license.key, productId, fingerprint: 'a' })
    test.clock.advance(10 * minute)
    await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint: 'a' }) // lease ends 01:10

    const bound = await byKey(test, 'tokens', { key: license.key, productId, fingerprint: 'a' })
    const unbound = await byKey(test, 'tokens', { key: license.key, productId })

    assert.equal(bound.statusCode, 201, bound.body)
    assert.equal(bound.json().payload.expirationDate, '2030-01-01T02:10:00.000Z')
    const product = await app.inject({ method: 'GET', url: `/api/v0/products/${productId}`, headers })
    const verified = await validateLicenseToken({
      productId,
      publicKey: product.json().publicKey,
      token: bound.json().token,
      now: test.clock.now(),
    })
    assert.equal(verified.expiresAt, '2030-01-01T02:10:00.000Z')
    assert.equal(unbound.json().payload.expirationDate, '2030-01-31T00:10:00.000Z') // the 30-day lifetime
    test.clock.advance(61 * minute)
    const lapsed = await byKey(test, 'tokens', { key: license.key, productId, fingerprint: 'a' })
    expectProblem(lapsed, 404, 'activation_not_found')
  })

  it('renews the leases under new terms when heartbeatTtl changes, and never lapses them with null', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId, app, headers } = test
    const license = await createLicense(app, headers, { productId, maxActivations: 3, heartbeatTtl: 300 })
    for (const fingerprint of ['a', 'b']) {
      await byKey(test, 'activate', { key: license.key, productId, fingerprint })
    }
    test.clock.advance(4 * minute)
    await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint: 'a' })
    test.clock.advance(2 * minute) // b lapsed, a holds its seat until 00:09

    const longer = await app.inject({
      method: 'PATCH',
      url: `/api/v0/licenses/${license.id}`,
      headers,
      payload: { heartbeatTtl: 3600 },
    })
    assert.equal(longer.statusCode, 200, longer.body)
    assert.equal(longer.json().heartbeatTtl, 3600)
    assert.equal(longer.json().activationCount, 1)
    assert.deepEqual(await seatCounts(test, license.id), { stored: 2, rows: 2, alive: 1 }) // b stays lapsed
    const listed = await app.inject({
      method: 'GET',
      url: `/api/v0/licenses/${license.id}/activations`,
      headers,
    })
    assert.equal(listed.json().data[0].expiresAt, '2030-01-01T01:06:00.000Z')

    const none = await app.inject({
      method: 'PATCH',
      url: `/api/v0/licenses/${license.id}`,
      headers,
      payload: { heartbeatTtl: null },
    })
    assert.equal(none.json().heartbeatTtl, null, none.body)
    test.clock.advance(365 * 24 * 60 * minute)
    const beat = await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint: 'a' })
    assert.equal(beat.statusCode, 200, beat.body)
    assert.equal(beat.json().expiresAt, null)
  })

  it('answers 400 for a heartbeatTtl outside 60..604800, and 409 license_not_active for a heartbeat of a revoked license', async (t) => {
    const test = await buildTestApp(t, database)
    const { productId, app, headers } = test
    for (const heartbeatTtl of [59, 604_801, 1.5, '600']) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v0/licenses',
        headers,
        payload: { productId, heartbeatTtl },
      })
      expectProblem(res, 400, 'validation_failed')
    }
    const license = await createLicense(app, headers, { productId, heartbeatTtl: 604_800 })
    assert.equal(license.heartbeatTtl, 604_800)
    await byKey(test, 'activate', { key: license.key, productId, fingerprint: 'a' })
    await app.inject({ method: 'POST', url: `/api/v0/licenses/${license.id}/revoke`, headers })

    const beat = await byKey(test, 'heartbeat', { key: license.key, productId, fingerprint: 'a' })

    expectProblem(beat, 409, 'license_not_active')
  })
})
