import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { describe, it } from 'node:test'
import { sqliteServerEnvironment } from '../testing/server-environments.js'
import { startServerProcess } from '../testing/server-process.js'

const adminKey = 'kt_admin_idle-connections-test-key-000001'
const idleConnections = 500
const slowlorisConnections = 20

/**
 * Many idle keep-alive connections (each served once, then left open) and slowloris-style requests
 * (headers begun, never finished) held against a running `keyturn serve`: a real client's
 * validations still answer promptly. (The 10,000-connection version with a tail comparison is a
 * benchmark scenario: bench/README.md.)
 */
describe('idle and slow connections', () => {
  it('do not starve a real client', async (t) => {
    const env = await sqliteServerEnvironment().fresh(t)
    const keyturn = await startServerProcess(t, { ...env, KEYTURN_ADMIN_KEY: adminKey })
    const { hostname, port } = new URL(keyturn.url)
    const sockets: Socket[] = []
    t.after(() => {
      for (const socket of sockets) {
        socket.destroy()
      }
    })
    const open = async () => {
      const socket = connect(Number(port), hostname)
      socket.on('error', () => {})
      sockets.push(socket)
      await once(socket, 'connect')
      return socket
    }
    const call = async (method: string, path: string, body?: unknown) => {
      const started = performance.now()
      const res = await fetch(`${keyturn.url}/api/v0${path}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return {
        status: res.status,
        body: (await res.json()) as Record<string, unknown>,
        ms: performance.now() - started,
      }
    }
    const product = await call('POST', '/products', { name: 'Idle' })
    const productId = product.body.id as string
    const license = await call('POST', '/licenses', { productId })
    const key = license.body.key as string

    // Keep-alive connections, each served one request and left open, in batches of 100.
    for (let batch = 0; batch < idleConnections / 100; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, async () => {
          const socket = await open()
          socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`)
          await once(socket, 'data')
        }),
      )
    }
    // Slowloris: a request's first headers, then nothing.
    for (let n = 0; n < slowlorisConnections; n++) {
      const socket = await open()
      socket.write(`POST /api/v0/licenses/validate HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: appl`)
    }

    const answers = []
    for (let n = 0; n < 20; n++) {
      answers.push(await call('POST', '/licenses/validate', { key, productId }))
    }
    for (const answer of answers) {
      assert.equal(answer.status, 200)
      assert.equal(answer.body.isValid, true)
      // A validation takes a few milliseconds here; generous for a busy machine.
      assert.ok(answer.ms < 1000, `answered in ${Math.round(answer.ms)} ms`)
    }
    assert.ok(
      sockets.every((socket) => !socket.destroyed),
      'the idle connections are still open (closed only after the keep-alive timeout)',
    )
    // Now, not after the test: a stopping server waits (up to 10 s) for requests under way.
    for (const socket of sockets) {
      socket.destroy()
    }
  })
})
