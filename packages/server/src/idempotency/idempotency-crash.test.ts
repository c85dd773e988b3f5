import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { Kysely } from 'kysely'
import type { Database } from '../storage/database.js'
import { apiRoutes, catalogueAppOptions, requestFor, seedRouteFixture } from '../testing/api-routes.js'
import { buildTestApp, createProduct, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { tableDigests } from '../testing/table-digests.js'
import type { StoredResponse } from './idempotency.js'
import { idempotencyLeaseMs } from './idempotency.js'
import type { ClaimOutcome, IdempotencyStore, NewClaim } from './idempotency-store.js'
import { KyselyIdempotencyStore } from './kysely-idempotency-store.js'

/**
 * The real store, except that the next response is never stored: as if the process were killed
 * after the change committed and before the response was recorded (docs/decisions/0012-events-and-unit-of-work.md).
 */
class CrashBeforeResponse implements IdempotencyStore {
  readonly #store: KyselyIdempotencyStore
  crashes = 1
  constructor(db: Kysely<Database>) {
    this.#store = new KyselyIdempotencyStore(db)
  }
  claim(claim: NewClaim, now: Date): Promise<ClaimOutcome> {
    return this.#store.claim(claim, now)
  }
  takeOver(previousRequestId: string, claim: NewClaim): Promise<boolean> {
    return this.#store.takeOver(previousRequestId, claim)
  }
  async complete(claim: NewClaim, response: StoredResponse, expiresAt: Date): Promise<boolean> {
    if (this.crashes > 0) {
      this.crashes--
      return false
    }
    return this.#store.complete(claim, response, expiresAt)
  }
  release(claim: NewClaim): Promise<void> {
    return this.#store.release(claim)
  }
  deleteExpired(now: Date, unansweredBefore: Date): Promise<number> {
    return this.#store.deleteExpired(now, unansweredBefore)
  }
}

const post = (test: TestApp, url: string, key: string, payload: object = {}) =>
  test.app.inject({ method: 'POST', url, headers: { ...test.headers, 'idempotency-key': key }, payload })

async function count(test: TestApp, table: 'licenses' | 'api_keys' | 'events'): Promise<number> {
  const row = await test.connection.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

describeEachDatabase(
  'Idempotency-Key after a crash between the change and the stored response',
  (database) => {
    async function crashingApp(t: Parameters<typeof buildTestApp>[0], crashes: number) {
      let store: CrashBeforeResponse | undefined
      const test = await buildTestApp(t, database, {
        idempotencyStore: (db) => {
          store = new CrashBeforeResponse(db)
          store.crashes = crashes
          return store
        },
      })
      assert.ok(store)
      return { test, store }
    }

    it('replays the committed license, creating nothing new, when the retry comes after the lease', async (t) => {
      const { test } = await crashingApp(t, 1)
      const first = await post(test, '/api/v0/licenses', 'K', { productId: test.productId })
      assert.equal(first.statusCode, 201, first.body)

      const early = await post(test, '/api/v0/licenses', 'K', { productId: test.productId })
      assert.equal(early.statusCode, 409, early.body)
      assert.equal(early.json().code, 'idempotency_key_in_progress')

      test.clock.advance(idempotencyLeaseMs + 1)
      const retry = await post(test, '/api/v0/licenses', 'K', { productId: test.productId })
      assert.equal(retry.statusCode, 201, retry.body)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.equal(retry.body, first.body)
      assert.equal(await count(test, 'licenses'), 1)

      const again = await post(test, '/api/v0/licenses', 'K', { productId: test.productId })
      assert.equal(again.statusCode, 201, again.body)
      assert.equal(again.headers['idempotent-replayed'], 'true')
      assert.equal(again.body, first.body)
      assert.equal(await count(test, 'licenses'), 1)
    })

    it('replays the committed license when the retry comes after the expired records were purged', async (t) => {
      const { test } = await crashingApp(t, 1)
      const first = await post(test, '/api/v0/licenses', 'K', { productId: test.productId })
      assert.equal(first.statusCode, 201, first.body)

      test.clock.advance(60 * 60 * 1000) // past the lease and the purge interval: the retry purges first
      const retry = await post(test, '/api/v0/licenses', 'K', { productId: test.productId })
      assert.equal(retry.statusCode, 201, retry.body)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.equal(retry.body, first.body)
      assert.equal(await count(test, 'licenses'), 1)
    })

    it('replays an action (revoke) with its 200 and the resource as it returned it', async (t) => {
      const { test, store } = await crashingApp(t, 0)
      const created = await post(test, '/api/v0/licenses', 'create', { productId: test.productId })
      const { id } = created.json()
      store.crashes = 1
      const first = await post(test, `/api/v0/licenses/${id}/revoke`, 'revoke')
      assert.equal(first.statusCode, 200, first.body)

      test.clock.advance(idempotencyLeaseMs + 1)
      const retry = await post(test, `/api/v0/licenses/${id}/revoke`, 'revoke')
      assert.equal(retry.statusCode, 200, retry.body)
      assert.equal(retry.headers['idempotent-replayed'], 'true')
      assert.equal(retry.body, first.body)
      assert.equal(await count(test, 'events'), 3) // product, license created, license revoked
    })

    it('answers 409 idempotency_key_unrecoverable, creating no second key, when the lost answer held a secret', async (t) => {
      const { test } = await crashingApp(t, 1)
      const body = { name: 'ci', role: 'admin' }
      const first = await post(test, '/api/v0/api-keys', 'key', body)
      assert.equal(first.statusCode, 201, first.body)
      const keys = await count(test, 'api_keys')

      test.clock.advance(idempotencyLeaseMs + 1)
      const retry = await post(test, '/api/v0/api-keys', 'key', body)
      assert.equal(retry.statusCode, 409, retry.body)
      assert.equal(retry.json().code, 'idempotency_key_unrecoverable')
      assert.equal(await count(test, 'api_keys'), keys)
    })

    it('runs a token request again (a token is never stored) when its answer was lost', async (t) => {
      const { test, store } = await crashingApp(t, 0)
      const { id } = (await post(test, '/api/v0/licenses', 'create', { productId: test.productId })).json()
      store.crashes = 1
      const first = await post(test, `/api/v0/licenses/${id}/tokens`, 'token')
      assert.equal(first.statusCode, 201, first.body)

      test.clock.advance(idempotencyLeaseMs + 1)
      const retry = await post(test, `/api/v0/licenses/${id}/tokens`, 'token')
      assert.equal(retry.statusCode, 201, retry.body)
      assert.equal(retry.headers['idempotent-replayed'], undefined)
      const replay = await post(test, `/api/v0/licenses/${id}/tokens`, 'token')
      assert.equal(replay.headers['idempotent-replayed'], 'true')
      assert.equal(replay.body, retry.body)
    })
  },
)

/**
 * Routes whose lost answer is made again instead of replayed (`idempotencyRecovery: 'rerun'`): a
 * token (never stored), a heartbeat ("alive now"), a test event and a delivery retry. Their retry
 * may change what running again changes, and nothing else.
 */
const rerunTables: Record<string, readonly string[]> = {
  '/licenses/:id/tokens': ['events'],
  '/licenses/tokens': ['events'],
  '/licenses/:id/license-file': ['events'],
  '/activations/:id/license-file': ['events'],
  '/licenses/license-file': ['events'],
  // The same request again: the same activation (no new one) and file; the file's issue is recorded again.
  '/licenses/activate-offline': ['events'],
  '/licenses/heartbeat': ['activations'],
  '/activations/:id/heartbeat': ['activations'],
  '/webhook-endpoints/:id/test': ['events', 'webhook_deliveries'],
  '/webhook-deliveries/:id/retry': ['webhook_deliveries'],
}

describeEachDatabase('Idempotency-Key after a crash, on every POST route', (database) => {
  it('creates or changes nothing a second time when any POST is retried after its answer was lost', async (t) => {
    const { test, store } = await crashingAppFor(t)
    const posts = apiRoutes.filter((route) => route.method === 'POST')
    assert.ok(posts.length >= 25, `only ${posts.length} POST routes in the catalogue`)
    const problems: string[] = []
    for (const route of posts) {
      // A product of its own per route, so one route's change (a revoke, a suspend) cannot refuse another.
      const productId = await createProduct(test.app, test.headers, `Crash ${route.path}`)
      const fixture = await seedRouteFixture(test.app, test.headers, productId, test.services.deliveries)
      const request = requestFor(route, '/api/v0', fixture)
      if (route.path === '/licenses/deactivate') {
        // The catalogue deactivates the machine its activate route activated just before.
        const activate = apiRoutes.find((other) => other.path === '/licenses/activate')
        assert.ok(activate)
        await test.app.inject({ ...requestFor(activate, '/api/v0', fixture), headers: test.headers })
      }
      const send = () =>
        test.app.inject({
          ...request,
          headers: { ...test.headers, 'idempotency-key': `crash ${route.path}` },
        })
      const where = `POST ${route.path}`

      const before = await tableDigests(test.connection)
      store.crashes = 1
      const first = await send()
      const committed = await tableDigests(test.connection)
      test.clock.advance(idempotencyLeaseMs + 1)
      const retry = await send()
      const after = await tableDigests(test.connection)

      const mayChange = rerunTables[route.path] ?? []
      const changedAgain = Object.keys(after).filter(
        (table) => after[table] !== committed[table] && !mayChange.includes(table),
      )
      const firstChanged = Object.keys(committed).some((table) => committed[table] !== before[table])
      const unrecoverable = retry.statusCode === 409 && retry.json().code === 'idempotency_key_unrecoverable'
      const answer = `${first.statusCode} then ${retry.statusCode} ${retry.body.slice(0, 200)}`
      if (first.statusCode >= 300) {
        problems.push(`${where}: the first request failed: ${first.statusCode} ${first.body}`)
      } else if (changedAgain.length > 0) {
        problems.push(`${where}: the retry changed ${changedAgain.join(', ')} again (${answer})`)
      } else if (unrecoverable) {
        // A secret shown once was lost with the answer: nothing new was created, and the 409 says so.
      } else if (retry.statusCode !== first.statusCode) {
        problems.push(`${where}: another answer (${answer})`)
      } else if (firstChanged && mayChange.length === 0 && retry.headers['idempotent-replayed'] !== 'true') {
        problems.push(`${where}: ran again instead of replaying (${answer})`)
      } else if (firstChanged && mayChange.length === 0 && retry.body !== first.body) {
        problems.push(`${where}: replayed another body (${answer})`)
      }
    }
    assert.deepEqual(problems, [])
  })

  async function crashingAppFor(t: Parameters<typeof buildTestApp>[0]) {
    let store: CrashBeforeResponse | undefined
    const test = await buildTestApp(t, database, {
      ...catalogueAppOptions,
      idempotencyStore: (db) => {
        store = new CrashBeforeResponse(db)
        store.crashes = 0
        return store
      },
    })
    assert.ok(store)
    return { test, store }
  }
})
