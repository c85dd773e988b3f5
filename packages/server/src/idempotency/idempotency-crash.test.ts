import assert from 'node:assert/strict'
import { it } from 'node:test'
import type { Kysely } from 'kysely'
import type { Database } from '../storage/database.js'
import { buildTestApp, type TestApp } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import type { StoredResponse } from './idempotency.js'
import { idempotencyLeaseMs } from './idempotency.js'
import type { ClaimOutcome, IdempotencyStore, NewClaim } from './idempotency-store.js'
import { KyselyIdempotencyStore } from './kysely-idempotency-store.js'

/**
 * The real store, except that the next response is never stored: as if the process were killed
 * after the change committed and before the response was recorded (issue #16, item 1).
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
  deleteExpired(now: Date): Promise<number> {
    return this.#store.deleteExpired(now)
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
