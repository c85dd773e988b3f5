/**
 * Connections that take a server's sockets without using them: slow clients and many
 * connections, keep-alive connections served one request each and then left open, and
 * slowloris-style requests whose headers are begun and never finished. Opened from this process
 * (not the load generator's), around a measured run.
 */
import { once } from 'node:events'
import { connect } from 'node:net'
import { assertLoopback } from './net.mjs'

/** Opened at once, at most: the server's listen backlog (511) is not overrun. */
const batch = 250

/**
 * Opens `idle` keep-alive connections (each after one `GET /healthz`) and `slow` unfinished
 * requests to `url`; resolves to the function that closes them all.
 */
export async function holdIdleConnections(url, { idle, slow }) {
  const { hostname, port } = new URL(assertLoopback(url))
  const sockets = []
  const open = async () => {
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    sockets.push(socket)
    await once(socket, 'connect')
    return socket
  }
  const close = async () => {
    for (const socket of sockets) {
      socket.destroy()
    }
  }
  try {
    for (let opened = 0; opened < idle; opened += batch) {
      await Promise.all(
        Array.from({ length: Math.min(batch, idle - opened) }, async () => {
          const socket = await open()
          socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nConnection: keep-alive\r\n\r\n`)
          await once(socket, 'data')
        }),
      )
    }
    for (let n = 0; n < slow; n++) {
      const socket = await open()
      socket.write(`POST /api/v0/licenses/validate HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: appl`)
    }
  } catch (error) {
    await close()
    throw error
  }
  return close
}
