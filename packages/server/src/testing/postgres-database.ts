import { randomBytes } from 'node:crypto'
import pg from 'pg'

/**
 * A database of this test process's own inside the test PostgreSQL: test files run in parallel
 * processes, and Kysely's migrator reads the catalogue of every schema in its database, which fails
 * when another process drops a schema at that moment. Schemas per test live inside it; the
 * database is dropped when the process is done (the throwaway server of scripts/test.mjs goes anyway).
 */
let ownDatabase: Promise<string> | undefined

/**
 * The schema, already migrated and empty, that a database copied from TEST_POSTGRES_TEMPLATE holds
 * (testing/postgres-template.ts); scripts/test.mjs migrates that template once per run.
 */
export const migratedTemplateSchema = 't_migrated'
let templateSchemaLeft = false

export function processDatabaseUrl(serverUrl: string): Promise<string> {
  ownDatabase ??= (async () => {
    const name = `keyturn_test_${process.pid}_${randomBytes(4).toString('hex')}`
    const template = process.env.TEST_POSTGRES_TEMPLATE
    await query(serverUrl, `create database ${name}${template ? ` template ${template}` : ''}`)
    templateSchemaLeft = Boolean(template)
    process.once('beforeExit', () => {
      query(serverUrl, `drop database if exists ${name} with (force)`).catch(() => {})
    })
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    return url.toString()
  })()
  return ownDatabase
}

/**
 * The migrated schema this process's database was copied with, the first time it is asked for (then
 * it belongs to the caller); undefined when it was taken already or there was no template.
 */
export function takeMigratedSchema(): string | undefined {
  if (!templateSchemaLeft) {
    return undefined
  }
  templateSchemaLeft = false
  return migratedTemplateSchema
}

/** Runs one statement on its own connection. */
export async function query(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/**
 * Drops a test's schema. A test's `after` hooks run in the order they were registered, so a server
 * started after its schema was made may still be running (its delivery loop reading) while the drop
 * waits for its locks: PostgreSQL then breaks the deadlock by failing one side. Retry the drop.
 */
export async function dropSchema(url: string, schema: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await query(url, `drop schema if exists ${schema} cascade`)
      return
    } catch (error) {
      const deadlock = (error as { code?: unknown }).code === '40P01'
      if (!deadlock || attempt === 5) {
        throw error
      }
    }
  }
}
