import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely'
import type { Connection } from './connect.js'
import type { DatabaseKind } from './database.js'
import { activations } from './migrations/2026-11-21-activations.js'
import { initialSchema } from './migrations/2026-11-21-initial-schema.js'

/** Every migration, in order: an explicit list, never a directory scan. */
function migrations(kind: DatabaseKind): Record<string, Migration> {
  return {
    '2026-11-21-initial-schema': initialSchema(kind),
    '2026-11-21-activations': activations(kind),
  }
}

class ListedMigrations implements MigrationProvider {
  readonly #kind: DatabaseKind
  constructor(kind: DatabaseKind) {
    this.#kind = kind
  }
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations(this.#kind)
  }
}

/** Applies every pending migration; returns the names applied. Several processes may race: the migrator locks. */
export async function migrateToLatest(connection: Connection): Promise<string[]> {
  const order = Object.keys(migrations(connection.kind))
  const migrator = new Migrator({
    db: connection.db as unknown as Kysely<unknown>, // migrations see a frozen, untyped schema
    provider: new ListedMigrations(connection.kind),
    // The list's order, not the names' alphabetical order: two migrations of one day must not swap.
    nameComparator: (a, b) => order.indexOf(a) - order.indexOf(b),
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error !== undefined) {
    throw new Error('Database migration failed', { cause: error })
  }
  return results.filter((result) => result.status === 'Success').map((result) => result.migrationName)
}
