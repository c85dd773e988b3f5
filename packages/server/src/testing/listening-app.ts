import { createServer as createHttpServer, type RequestListener } from 'node:http'
import { type AddressInfo, createServer as createNetServer } from 'node:net'
import type { TestContext } from 'node:test'
import { buildTestApp, type TestApp, type TestAppOptions } from './build-test-app.js'
import type { TestDatabase } from './each-database.js'

export interface ListeningTestApp extends TestApp {
  /** Where the app listens, e.g. `http://127.0.0.1:41234` (no trailing slash, no `/api/v0`). */
  readonly baseUrl: string
}

/**
 * buildTestApp, listening for real HTTP on 127.0.0.1 at a free port: for the client library and
 * browsers, which cannot use `app.inject`. The app (and so the listener) closes after the test.
 */
export async function startTestServer(
  t: TestContext,
  database: TestDatabase,
  options: TestAppOptions = {},
): Promise<ListeningTestApp> {
  const test = await buildTestApp(t, database, options)
  const baseUrl = await test.app.listen({ port: 0, host: '127.0.0.1' })
  return { ...test, baseUrl }
}

/** An address where nothing listens: a loopback port that was free a moment ago, so connecting is refused. */
export async function closedPortUrl(): Promise<string> {
  const server = createNetServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  const { port } = server.address() as AddressInfo // a TCP listener's address is an AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

/** A plain node:http server on 127.0.0.1 at a free port, closed after the test; resolves to its origin. */
export async function serveHttp(t: TestContext, handler: RequestListener): Promise<string> {
  const server = createHttpServer(handler)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const { port } = server.address() as AddressInfo // a TCP listener's address is an AddressInfo
  return `http://127.0.0.1:${port}`
}
