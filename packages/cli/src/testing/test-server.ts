import type { TestContext } from 'node:test'
// The server's own test helpers, by path: the CLI package does not depend on the server's internals.
import { testAdminSecret } from '@keyturn/server/testing/build-test-app'
import type { TestDatabase } from '@keyturn/server/testing/each-database'
import { sqliteTestDatabase } from '@keyturn/server/testing/each-database'
import { type ListeningTestApp, startTestServer } from '@keyturn/server/testing/listening-app'

export interface CliTestServer extends ListeningTestApp {
  /** KEYTURN_URL and KEYTURN_API_KEY (the admin key) for `keyturn` against this server. */
  readonly env: Readonly<Record<string, string>>
}

/** A real server on 127.0.0.1 (SQLite in memory unless told otherwise), and the environment to reach it. */
export async function startCliTestServer(
  t: TestContext,
  database: TestDatabase = sqliteTestDatabase(),
): Promise<CliTestServer> {
  const server = await startTestServer(t, database)
  return { ...server, env: { KEYTURN_URL: server.baseUrl, KEYTURN_API_KEY: testAdminSecret } }
}

/** How many licenses the server holds (of one product, if given), asked in-process. */
export async function licenseCount(server: CliTestServer, productId?: string): Promise<number> {
  const query = productId === undefined ? '' : `&productId=${productId}`
  const res = await server.app.inject({ url: `/api/v0/licenses?limit=1${query}`, headers: server.headers })
  if (res.statusCode !== 200) {
    throw new Error(`listing licenses failed: ${res.body}`)
  }
  return res.json().totalCount
}
