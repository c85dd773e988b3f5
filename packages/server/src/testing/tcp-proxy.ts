import { createServer, type Socket, connect as tcpConnect } from 'node:net'
import type { TestContext } from 'node:test'

/**
 * A TCP proxy on a loopback port in front of a real server (PostgreSQL, Redis), for fault tests:
 * the test decides when and how the server behind it is reachable.
 * - `down()`: new connections are cut as soon as they arrive (as a stopped server refuses them);
 *   `cut()` ends the open ones abruptly.
 * - `blackhole()`: nothing is forwarded either way and nothing is closed, on open and new
 *   connections alike: a silent peer (a dropped route, a cable pulled, a firewall that drops). Only
 *   timeouts notice. `up()` forwards again, held bytes first, as TCP would once the route is back.
 * - `latency(ms)`: each chunk is delivered `ms` later in each direction (a round trip costs 2 × ms).
 */
export interface TcpProxy {
  readonly host: string
  readonly port: number
  /** The local ports of the proxy's own connections to the server (as the server sees its clients). */
  upstreamPorts(): number[]
  /** Refuse new connections from now on. */
  down(): void
  /** Accept and forward connections again, without delay. */
  up(): void
  /** Ends every open connection at once, both ways. */
  cut(): void
  /** Forward nothing, close nothing, until `up()`. */
  blackhole(): void
  /** Delay every chunk by `ms` in each direction (0: none). */
  latency(ms: number): void
}

type Mode = 'forward' | 'refuse' | 'blackhole'

/** One direction of a proxied connection: chunks wait here while held or delayed. */
class Lane {
  readonly #queue: { chunk: Buffer; due: number }[] = []
  readonly #to: Socket
  readonly #held: () => boolean
  #timer: NodeJS.Timeout | undefined

  constructor(to: Socket, held: () => boolean) {
    this.#to = to
    this.#held = held
  }

  push(chunk: Buffer, delayMs: number): void {
    this.#queue.push({ chunk, due: performance.now() + delayMs })
    this.flush()
  }

  /** Writes the chunks that are due, in order, and waits for the next one; nothing while held. */
  flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#held()) {
      return
    }
    const now = performance.now()
    while (this.#queue.length > 0) {
      const next = this.#queue[0]
      if (next === undefined || next.due > now) {
        break
      }
      this.#queue.shift()
      if (!this.#to.destroyed) {
        this.#to.write(next.chunk)
      }
    }
    const next = this.#queue[0]
    if (next !== undefined) {
      this.#timer = setTimeout(() => this.flush(), Math.max(0, next.due - now))
    }
  }

  stop(): void {
    clearTimeout(this.#timer)
    this.#queue.length = 0
  }
}

export async function startTcpProxy(
  t: TestContext,
  target: { host: string; port: number },
): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket; lanes: Lane[] }>()
  let mode: Mode = 'forward'
  let delayMs = 0
  const server = createServer((client) => {
    if (mode === 'refuse') {
      client.destroy()
      return
    }
    const upstream = tcpConnect(target.port, target.host)
    const held = () => mode === 'blackhole'
    const toUpstream = new Lane(upstream, held)
    const toClient = new Lane(client, held)
    const pair = { client, upstream, lanes: [toUpstream, toClient] }
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      toUpstream.stop()
      toClient.stop()
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.on('data', (chunk: Buffer) => toUpstream.push(chunk, delayMs))
    upstream.on('data', (chunk: Buffer) => toClient.push(chunk, delayMs))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') {
    throw new Error('the proxy has no TCP address')
  }
  const cut = () => {
    for (const { client, upstream, lanes } of pairs) {
      for (const lane of lanes) {
        lane.stop()
      }
      client.destroy()
      upstream.destroy()
    }
    pairs.clear()
  }
  t.after(
    () =>
      new Promise<void>((resolve) => {
        cut()
        server.close(() => resolve())
      }),
  )
  return {
    host: '127.0.0.1',
    port: address.port,
    upstreamPorts: () => [...pairs].map(({ upstream }) => upstream.localPort ?? 0),
    down: () => {
      mode = 'refuse'
    },
    up: () => {
      mode = 'forward'
      delayMs = 0
      for (const { lanes } of pairs) {
        for (const lane of lanes) {
          lane.flush()
        }
      }
    },
    cut,
    blackhole: () => {
      mode = 'blackhole'
    },
    latency: (ms) => {
      delayMs = ms
    },
  }
}
