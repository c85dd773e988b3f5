import assert from 'node:assert/strict'
import { it } from 'node:test'
import {
  type ActivationResource,
  type HeartbeatTimers,
  KeyturnApiError,
  KeyturnClient,
} from '@keyturn/client'
import { testAdminSecret } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { startTestServer } from '../testing/listening-app.js'

/** Timers the test fires by hand: `fire()` runs the next callback and waits until the loop schedules again. */
class ManualTimers implements HeartbeatTimers {
  readonly pending: { callback: () => void; ms: number }[] = []
  #scheduled: (() => void) | undefined

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { callback, ms }
    this.pending.push(timer)
    this.#scheduled?.()
    return timer
  }

  clearTimeout(handle: unknown): void {
    const index = this.pending.findIndex((timer) => timer === handle)
    if (index >= 0) {
      this.pending.splice(index, 1)
    }
  }

  /** Runs the one pending timer; resolves with the delay of the one the loop schedules next. */
  async fire(): Promise<number> {
    assert.equal(this.pending.length, 1, 'exactly one timer is pending')
    const [timer] = this.pending.splice(0, 1)
    const next = new Promise<void>((resolve) => {
      this.#scheduled = resolve
    })
    timer?.callback()
    await next
    this.#scheduled = undefined
    const [scheduled] = this.pending
    assert.ok(scheduled)
    return scheduled.ms
  }
}

describeEachDatabase('startHeartbeats against a listening server', (database) => {
  it('keeps a floating seat at half the TTL, reports its loss, takes it again when one is free, and frees it on stop', async (t) => {
    const server = await startTestServer(t, database)
    let isNetworkDown = false
    const keyturn = new KeyturnClient({
      baseUrl: server.baseUrl,
      apiKey: testAdminSecret,
      fetch: async (input, init) => {
        if (isNetworkDown) {
          throw new TypeError('fetch failed')
        }
        return globalThis.fetch(input, init)
      },
    })
    const license = await keyturn.createLicense({
      productId: server.productId,
      maxActivations: 1,
      heartbeatTtl: 60,
    })
    const timers = new ManualTimers()
    const events: string[] = []
    const beats: ActivationResource[] = []

    const seat = await keyturn.startHeartbeats({
      key: license.key,
      productId: server.productId,
      fingerprint: 'laptop',
      timers,
      onHeartbeat: (activation) => beats.push(activation),
      onSeatLost: (error: KeyturnApiError) => events.push(`lost ${error.code}`),
      onSeatRegained: (activation) => events.push(`regained ${activation.fingerprint}`),
      onError: (error) =>
        events.push(
          `error ${error instanceof KeyturnApiError ? error.code : error instanceof Error ? error.name : String(error)}`,
        ),
    })
    assert.equal(seat.holdsSeat, true)
    assert.deepEqual(
      timers.pending.map((timer) => timer.ms),
      [30_000],
    )

    server.clock.advance(30_000)
    assert.equal(await timers.fire(), 30_000)
    assert.equal(beats.at(-1)?.expiresAt, '2030-01-01T00:01:30.000Z')

    // The network drops: retried with backoff, the seat is still held.
    isNetworkDown = true
    const retry = await timers.fire()
    assert.ok(retry >= 500 && retry <= 1000, String(retry))
    assert.equal(seat.holdsSeat, true)
    isNetworkDown = false

    // Offline past the lease: another machine takes the seat; the laptop learns it lost its own.
    server.clock.advance(61_000)
    const desktop = await keyturn.activateLicenseByKey({
      key: license.key,
      productId: server.productId,
      fingerprint: 'desktop',
    })
    const afterLoss = await timers.fire()
    assert.equal(seat.holdsSeat, false)
    assert.ok(afterLoss >= 1000 && afterLoss <= 2000, String(afterLoss)) // the second failure in a row
    const whileTaken = await timers.fire() // activate again: 409 activation_limit_reached, backoff grows
    assert.ok(whileTaken >= 2000 && whileTaken <= 4000, String(whileTaken))
    assert.equal(seat.holdsSeat, false)

    await keyturn.deleteActivation(desktop.id)
    assert.equal(await timers.fire(), 30_000)
    assert.equal(seat.holdsSeat, true)
    assert.deepEqual(events, [
      'error KeyturnConnectionError',
      'lost activation_not_found',
      'error activation_limit_reached',
      'regained laptop',
    ])

    await seat.stop()
    await seat.stop()
    assert.equal(seat.holdsSeat, false)
    assert.deepEqual(timers.pending, [])
    assert.equal((await keyturn.getLicense(license.id)).activationCount, 0)
  })

  it('rejects with activation_limit_reached when no seat is free, and heartbeats every 15 minutes without a TTL', async (t) => {
    const server = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl: server.baseUrl, apiKey: testAdminSecret })
    const license = await keyturn.createLicense({ productId: server.productId, maxActivations: 1 })
    const timers = new ManualTimers()
    const machine = { key: license.key, productId: server.productId, timers }

    const first = await keyturn.startHeartbeats({ ...machine, fingerprint: 'a' })
    const refused = await keyturn.startHeartbeats({ ...machine, fingerprint: 'b' }).catch((error) => error)

    assert.equal(refused.code, 'activation_limit_reached')
    assert.deepEqual(
      timers.pending.map((timer) => timer.ms),
      [15 * 60_000],
    )
    await first.stop()
  })
})
