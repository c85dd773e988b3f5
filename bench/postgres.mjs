/**
 * A throwaway PostgreSQL for the benchmark, started by the same code as the tests'
 * (scripts/throwaway-postgres.mjs) but with PostgreSQL's durability on, stopped on every exit path
 * of the harness.
 */
import { startThrowawayPostgres } from '../scripts/throwaway-postgres.mjs'
import { onCleanup } from './cleanup.mjs'

/** `{ url, version, stop }`, or `{ skip: reason }`. */
export async function startPostgres() {
  // Durable, as in production: a write is measured with its commit flushed to disk.
  const postgres = await startThrowawayPostgres('keyturn-bench-pg', { durable: true })
  if (postgres.skip !== undefined) {
    return postgres
  }
  return { ...postgres, stop: onCleanup('PostgreSQL', postgres.stop) }
}

/** For a tool that cannot do without it: the throwaway PostgreSQL's URL, or an error saying why not. */
export async function requirePostgres() {
  const postgres = await startPostgres()
  if (postgres.skip !== undefined) {
    throw new Error(`PostgreSQL unavailable: ${postgres.skip}`)
  }
  return postgres.url
}
