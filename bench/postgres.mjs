/**
 * A throwaway PostgreSQL for the benchmark, started by the same code as the tests'
 * (scripts/throwaway-postgres.mjs), stopped on every exit path of the harness.
 */
import { startThrowawayPostgres } from '../scripts/throwaway-postgres.mjs'
import { onCleanup } from './cleanup.mjs'

/** `{ url, version, stop }`, or `{ skip: reason }`. */
export async function startPostgres() {
  const postgres = await startThrowawayPostgres('keyturn-bench-pg')
  if (postgres.skip !== undefined) {
    return postgres
  }
  return { ...postgres, stop: onCleanup('PostgreSQL', postgres.stop) }
}
