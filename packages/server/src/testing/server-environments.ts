import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext } from 'node:test'
import { dropSchema, processDatabaseUrl, query } from './postgres-database.js'

/** Environment variables for `serve`/`migrate` (or the CLI) on a fresh, empty database. */
export interface ServerEnvironment {
  readonly kind: 'sqlite' | 'postgres'
  /** A fresh database for this test, removed after it: PORT=0, LOG_LEVEL=silent, and its URL. */
  fresh(t: TestContext): Promise<Record<string, string>>
}

export const testMasterSecret = 'test-master-secret-with-at-least-32-characters'

/** A database file in a temporary data folder (the generated keyturn.secret goes beside it). */
export function sqliteServerEnvironment(): ServerEnvironment {
  return {
    kind: 'sqlite',
    async fresh(t) {
      const dir = mkdtempSync(join(tmpdir(), 'keyturn-serve-'))
      t.after(() => rmSync(dir, { recursive: true, force: true }))
      return {
        PORT: '0',
        LOG_LEVEL: 'silent',
        KEYTURN_DATABASE_URL: `sqlite:${join(dir, 'data', 'keyturn.db')}`,
      }
    },
  }
}

/**
 * A schema of its own (t_<random>) selected through the URL's `options`, as an operator would; the
 * server cannot be handed a search path any other way. Dropped after the test.
 */
export function postgresServerEnvironment(url: string): ServerEnvironment {
  return {
    kind: 'postgres',
    async fresh(t) {
      const database = await processDatabaseUrl(url)
      const schema = `t_${randomBytes(6).toString('hex')}`
      await query(database, `create schema ${schema}`)
      t.after(() => dropSchema(database, schema))
      const withSchema = new URL(database)
      withSchema.searchParams.set('options', `-c search_path=${schema}`)
      return {
        PORT: '0',
        LOG_LEVEL: 'silent',
        KEYTURN_DATABASE_URL: withSchema.toString(),
        KEYTURN_SECRET: testMasterSecret,
      }
    },
  }
}

/** Runs a suite against SQLite files, and against PostgreSQL whenever TEST_POSTGRES_URL is set. */
export function describeEachServerEnvironment(
  title: string,
  suite: (environment: ServerEnvironment) => void,
): void {
  const url = process.env.TEST_POSTGRES_URL
  const skip = url ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')
  describe(`${title} [sqlite]`, () => suite(sqliteServerEnvironment()))
  describe(`${title} [postgres]`, { skip }, () => suite(postgresServerEnvironment(url ?? '')))
}
