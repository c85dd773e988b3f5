import { randomBytes } from 'node:crypto'
import { connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'
import { migratedTemplateSchema, query } from './postgres-database.js'

/**
 * Makes a database holding one migrated, empty schema (`t_migrated`), for the test processes of a
 * run to copy (`create database … template …`, testing/postgres-database.ts) instead of each
 * running every migration again (some 200 statements: about half a second per test file). Nothing may
 * connect to it while it is copied, so only its maker does, before the tests start. `drop` removes
 * it after the run.
 */
export async function createMigratedTemplate(
  serverUrl: string,
): Promise<{ readonly name: string; drop(): Promise<void> }> {
  const name = `keyturn_template_${process.pid}_${randomBytes(4).toString('hex')}`
  await query(serverUrl, `create database ${name}`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  await query(url.toString(), `create schema ${migratedTemplateSchema}`)
  const connection = connect(
    { kind: 'postgres', url: url.toString() },
    { searchPath: migratedTemplateSchema, poolSize: 1 },
  )
  try {
    await migrateToLatest(connection)
  } finally {
    await connection.close()
  }
  return { name, drop: () => query(serverUrl, `drop database if exists ${name} with (force)`) }
}
