import type { Kysely } from 'kysely'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { Reachability } from '../storage/connect.js'
import type { Database } from '../storage/database.js'
import { databaseFaultOf } from '../storage/database-faults.js'
import { checkDatabase } from '../storage/health.js'
import type { App } from './app-types.js'
import { problemFor, sendProblem } from './error-handler.js'

/**
 * What the server depends on, as the connections last saw it: `/readyz` names what fails, and
 * `/metrics` shows it with the database pool's state.
 */
export interface Dependencies {
  readonly database: Reachability
  /**
   * The shared rate-limit counters (KEYTURN_REDIS_URL), when configured. Requests are served while
   * Redis is away (fail-open), so it makes `/readyz` say `degraded`, never fail.
   */
  readonly redis?: { readonly reachable: boolean }
}

/**
 * `GET /readyz`: 200 `{ status: 'ok' }` when the database answers a trivial query (with
 * `degraded: ['redis']` while the rate-limit counters are unreachable), else 503
 * `service_unavailable` with `failing: ['database']`.
 */
export function registerReadiness(ops: App, db: Kysely<Database>, dependencies?: Dependencies): void {
  // Probes come every few seconds: log them only when something is wrong.
  ops.get('/readyz', { logLevel: 'warn' }, async (request, reply) => {
    try {
      await checkDatabase(db)
    } catch (error) {
      // An outage is logged once when it starts (entry/serve.ts), not with every probe.
      if (databaseFaultOf(error) === undefined) {
        request.log.warn({ err: error }, 'readiness check failed')
      }
      const problem = problemFor('service_unavailable', 'The database does not answer.', request.id)
      return sendProblem(reply, Object.assign(problem, { failing: ['database'] }))
    }
    return dependencies?.redis?.reachable === false ? { status: 'ok', degraded: ['redis'] } : { status: 'ok' }
  })
}

/**
 * The dependencies' gauges: the PostgreSQL pool (connections open and idle, requests waiting for
 * one), connection errors since start, and whether the database and Redis answer (1) or not (0).
 */
export function registerDependencyMetrics(registry: Registry, dependencies: Dependencies): void {
  const { database, redis } = dependencies
  new Gauge({
    name: 'keyturn_database_reachable',
    help: 'Whether the database answered the last time this process used it (1) or not (0).',
    registers: [registry],
    collect() {
      this.set(database.reachable ? 1 : 0)
    },
  })
  new Gauge({
    name: 'keyturn_database_pool_connections',
    help: 'PostgreSQL connections held by this process, by state: in_use or idle (0 on SQLite).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { total, idle } = database.pool()
      this.set({ state: 'in_use' }, total - idle)
      this.set({ state: 'idle' }, idle)
    },
  })
  new Gauge({
    name: 'keyturn_database_pool_waiting_requests',
    help: 'Queries waiting for a PostgreSQL connection from this process pool (0 on SQLite).',
    registers: [registry],
    collect() {
      this.set(database.pool().waiting)
    },
  })
  new Counter({
    name: 'keyturn_database_connection_errors_total',
    help: 'Database connection errors seen by this process: connections lost, refused or timed out.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(database.errors)
    },
  })
  if (redis !== undefined) {
    new Gauge({
      name: 'keyturn_redis_reachable',
      help: 'Whether Redis (shared rate-limit counters) is connected (1) or not (0: limits fail open).',
      registers: [registry],
      collect() {
        this.set(redis.reachable ? 1 : 0)
      },
    })
  }
}
