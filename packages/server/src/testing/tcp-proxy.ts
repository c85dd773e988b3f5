import { createServer, type Socket, connect as tcpConnect } from 'node:net'
import type { TestContext } from 'node:test'

/**
 * A TCP proxy on a loopback port in front of a real server (PostgreSQL, Redis), for fault tests:
 * the test decides when the server behind it is reachable. While `down`, new connections are cut as
 * soon as they arrive (as a stopped server refuses them); `cut()` ends the open ones abruptly.
 */
export interface TcpProxy {
  readonly host: string
  readonly port: number
  /** The local ports of the proxy's own connections to the server (as the server sees its clients). */
  upstreamPorts(): number[]
  /** Refuse new connections from now on. */
  down(): void
  /** Accept and forward connections again. */
  up(): void
  /** Ends every open connection at once, both ways. */
  cut(): void
}

export async function startTcpProxy(
  t: TestContext,
  target: { host: string; port: number },
): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>()
  let accepting = true
  const server = createServer((client) => {
    if (!accepting) {
      client.destroy()
      return
    }
    const upstream = tcpConnect(target.port, target.host)
    const pair = { client, upstream }
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') {
    throw new Error('the proxy has no TCP address')
  }
  const cut = () => {
    for (const { client, upstream } of pairs) {
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
      accepting = false
    },
    up: () => {
      accepting = true
    },
    cut,
  }
}
