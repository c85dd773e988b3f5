/** Loopback helpers: the benchmark never talks to anything but 127.0.0.1. */
import { createServer } from 'node:net'

/**
 * In a load's request body, replaced by 32 new random hex digits on every request the load
 * generator sends (bench/load-worker.mjs): a value never sent before, such as a new machine's
 * fingerprint.
 */
export const freshValue = '<fresh>'

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** Refuses any URL that is not on the loopback interface. */
export function assertLoopback(url) {
  const { hostname } = new URL(url)
  if (hostname !== '127.0.0.1' && hostname !== 'localhost' && hostname !== '[::1]') {
    throw new Error(`The benchmark only talks to loopback addresses, not ${hostname}`)
  }
  return url
}

/** A JSON request to the Keyturn API; resolves to `{ status, body }`. Bounded by a timeout. */
export async function api(baseUrl, apiKey, method, path, body, timeoutMs = 120_000) {
  const response = await fetch(assertLoopback(`${baseUrl}${path}`), {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  })
  const text = await response.text()
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) }
}

/** Like api(), but any status other than `expected` is an error naming the response. */
export async function apiOk(baseUrl, apiKey, method, path, body, expected = 200) {
  const response = await api(baseUrl, apiKey, method, path, body)
  if (response.status !== expected) {
    throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`)
  }
  return response.body
}
