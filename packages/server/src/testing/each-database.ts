import { randomBytes } from 'node:crypto'
import { describe } from 'node:test'
import { type Connection, connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'
import { processDatabaseUrl, query } from './postgres-database.js'

/** How to get a fresh, migrated database for one test. */
export interface TestDatabase {
  readonly kind: 'sqlite' | 'postgres'
  open(): Promise<Connection>
}

export function sqliteTestDatabase(): TestDatabase {
  return {
    kind: 'sqlite',
    async open() {
      const connection = connect({ kind: 'sqlite', path: ':memory:' })
      await migrateToLatest(connection)
      return connection
    },
  }
}

/**
 * Each test gets its own schema (t_<random>), dropped when it closes, inside this process's own
 * database (testing/postgres-database.ts).
 */
export function postgresTestDatabase(serverUrl: string): TestDatabase {
  return {
    kind: 'postgres',
    async open() {
      const url = await processDatabaseUrl(serverUrl)
      const schema = `t_${randomBytes(6).toString('hex')}`
      await query(url, `create schema ${schema}`)
      const connection = connect({ kind: 'postgres', url }, { searchPath: schema, poolSize: 5 })
      await migrateToLatest(connection)
      let closed = false
      return {
        ...connection,
        close: async () => {
          if (closed) {
            return
          }
          closed = true
          await connection.close()
          await query(url, `drop schema ${schema} cascade`)
        },
      }
    },
  }
}

/** Runs a suite on SQLite, and on PostgreSQL whenever TEST_POSTGRES_URL is set (skipped with the reason otherwise). */
export function describeEachDatabase(title: string, suite: (database: TestDatabase) => void): void {
  const url = process.env.TEST_POSTGRES_URL
  const skip = url ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')
  describe(`${title} [sqlite]`, () => suite(sqliteTestDatabase()))
  describe(`${title} [postgres]`, { skip }, () => suite(postgresTestDatabase(url ?? '')))
}
