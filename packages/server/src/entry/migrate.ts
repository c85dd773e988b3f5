import { loadConfig } from '../config.js'
import { connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'
import type { Environment, Output } from './common.js'

/** Applies pending migrations and reports what it did. */
export async function migrate(env: Environment, output: Output): Promise<void> {
  const config = loadConfig(env)
  const connection = connect(config.database)
  try {
    const applied = await migrateToLatest(connection)
    output.print(applied.length === 0 ? 'The database is up to date.' : `Applied: ${applied.join(', ')}`)
  } finally {
    await connection.close()
  }
}
