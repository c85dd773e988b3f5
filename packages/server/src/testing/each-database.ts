import { randomBytes } from 'node:crypto'
import { describe } from 'node:test'
import pg from 'pg'
import { type Connection, connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'

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

/** Each test gets its own schema (t_<random>), dropped when it closes: test files run in parallel. */
export function postgresTestDatabase(url: string): TestDatabase {
  return {
    kind: 'postgres',
    async open() {
      const schema = `t_${randomBytes(6).toString('hex')}`
      const admin = new pg.Client({ connectionString: url })
      await admin.connect()
      await admin.query(`create schema ${schema}`)
      await admin.end()
      const connection = connect({ kind: 'postgres', url }, { searchPath: schema, poolSize: 5 })
      await migrateToLatest(connection)
      return {
        ...connection,
        close: async () => {
          await connection.close()
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          await client.query(`drop schema ${schema} cascade`)
          await client.end()
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
