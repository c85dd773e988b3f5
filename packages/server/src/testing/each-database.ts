import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe } from 'node:test'
import { sql } from 'kysely'
import pg from 'pg'
import { type Connection, connect } from '../storage/connect.js'
import { migrateToLatest } from '../storage/migrate.js'
import { processDatabaseUrl, query, takeMigratedSchema } from './postgres-database.js'

/** How to get a fresh, migrated database for one test. */
export interface TestDatabase {
  readonly kind: 'sqlite' | 'postgres'
  open(): Promise<Connection>
}

export function sqliteTestDatabase(): TestDatabase {
  return {
    kind: 'sqlite',
    async open() {
      return connect({ kind: 'sqlite', path: ':memory:' }, { sqliteImage: await migratedSqliteImage() })
    },
  }
}

let sqliteImage: Promise<Buffer> | undefined

/**
 * A migrated SQLite database, serialized, read once per test process: each test's in-memory
 * database starts as a copy of it instead of running the migrations again. scripts/test.mjs makes
 * the file once per run (TEST_SQLITE_TEMPLATE); without it, the process migrates one of its own.
 */
function migratedSqliteImage(): Promise<Buffer> {
  sqliteImage ??= (async () => {
    const made = process.env.TEST_SQLITE_TEMPLATE
    if (made) {
      return readFileSync(made)
    }
    const dir = mkdtempSync(join(tmpdir(), 'keyturn-template-'))
    try {
      const path = join(dir, 'template.db')
      await writeMigratedSqlite(path)
      return readFileSync(path)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })()
  return sqliteImage
}

/** Writes a migrated SQLite database, in one file, to `path`. */
export async function writeMigratedSqlite(path: string): Promise<void> {
  const connection = connect({ kind: 'sqlite', path })
  await migrateToLatest(connection)
  await sql`pragma journal_mode = delete`.execute(connection.db) // one file, no WAL to deserialize
  await connection.close()
}

/**
 * Each test gets its own schema (t_<random>), dropped when it closes, inside this process's own
 * database (testing/postgres-database.ts). The first takes the migrated schema the database was
 * copied with when scripts/test.mjs made a template (no migrations to run); later ones reuse
 * emptied schemas, or make and migrate one.
 */
export function postgresTestDatabase(serverUrl: string): TestDatabase {
  return {
    kind: 'postgres',
    async open() {
      const url = await processDatabaseUrl(serverUrl)
      const migrated = idleSchemas.pop() ?? takeMigratedSchema()
      const schema = migrated ?? `t_${randomBytes(6).toString('hex')}`
      if (migrated === undefined) {
        await query(url, `create schema ${schema}`)
      }
      const connection = connect({ kind: 'postgres', url }, { searchPath: schema, poolSize: 5 })
      if (migrated === undefined) {
        await migrateToLatest(connection)
      }
      // Described while it is as the migrations left it: the first schema of the process is fresh.
      freshTables ??= describeTables(url, schema)
      await freshTables
      let closed = false
      return {
        ...connection,
        close: async () => {
          if (closed) {
            return
          }
          closed = true
          await connection.close()
          if (await emptiedForReuse(url, schema)) {
            idleSchemas.push(schema)
          } else {
            await query(url, `drop schema ${schema} cascade`)
          }
        },
      }
    },
  }
}

/**
 * Migrated schemas of this process that a closed test left, emptied: the next test takes one
 * instead of creating a schema and running every migration (most of a PostgreSQL test's set-up).
 */
const idleSchemas: string[] = []
/** The tables a freshly migrated schema has, and whether the migrations left rows in any. */
let freshTables: Promise<FreshTables> | undefined

interface FreshTables {
  readonly tables: string
  readonly seeded: boolean
  /**
   * Keyturn's own tables, each after every table whose foreign keys point at it, or undefined when
   * the keys form a cycle (then TRUNCATE empties them).
   */
  readonly deleteOrder: readonly string[] | undefined
  /** Sequences of the schema, restarted with the tables (as TRUNCATE … RESTART IDENTITY did). */
  readonly sequences: readonly string[]
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

async function tablesOf(client: pg.Client, schema: string): Promise<string[]> {
  const listed = await client.query<{ name: string }>(
    'select tablename as name from pg_tables where schemaname = $1 order by tablename',
    [schema],
  )
  return listed.rows.map((row) => row.name)
}

/** Keyturn's own tables, without the migrator's. */
function ownTables(tables: readonly string[]): string[] {
  return tables.filter((name) => !name.startsWith('kysely_'))
}

function describeTables(url: string, schema: string): Promise<FreshTables> {
  return withClient(url, async (client) => {
    const tables = await tablesOf(client, schema)
    const own = ownTables(tables)
    const nonEmpty =
      own.length === 0
        ? []
        : (
            await client.query(
              own
                .map((name) => `select 1 from "${schema}"."${name}" having count(*) > 0`)
                .join(' union all '),
            )
          ).rows
    const references = await client.query<{ child: string; parent: string }>(
      `select child.relname as child, parent.relname as parent
         from pg_constraint c
         join pg_class child on child.oid = c.conrelid
         join pg_class parent on parent.oid = c.confrelid
        where c.contype = 'f' and c.connamespace = $1::regnamespace`,
      [schema],
    )
    const sequences = await client.query<{ name: string }>(
      `select relname as name from pg_class where relkind = 'S' and relnamespace = $1::regnamespace order by relname`,
      [schema],
    )
    return {
      tables: tables.join(','),
      seeded: nonEmpty.length > 0,
      deleteOrder: triggerKeptLast(childrenFirst(own, references.rows)),
      sequences: sequences.rows.map((row) => row.name),
    }
  })
}

/** Tables that triggers write when others change (migration 90): emptied after those others. */
const triggerKept = ['license_counts']

function triggerKeptLast(order: string[] | undefined): string[] | undefined {
  return order === undefined
    ? undefined
    : [
        ...order.filter((table) => !triggerKept.includes(table)),
        ...order.filter((table) => triggerKept.includes(table)),
      ]
}

/** `tables` ordered so that each comes after every table referencing it; undefined on a cycle. */
function childrenFirst(
  tables: readonly string[],
  references: readonly { readonly child: string; readonly parent: string }[],
): string[] | undefined {
  const order: string[] = []
  const placed = new Set<string>()
  const pending = new Set(tables)
  while (pending.size > 0) {
    const ready = [...pending].filter((table) =>
      references.every(
        (reference) => reference.parent !== table || reference.child === table || placed.has(reference.child),
      ),
    )
    if (ready.length === 0) {
      return undefined
    }
    for (const table of ready) {
      order.push(table)
      placed.add(table)
      pending.delete(table)
    }
  }
  return order
}

/**
 * Empties `schema` (every table but the migrator's) so that it is as a fresh migrated
 * one, and says whether it can be reused: not when a test changed its tables (dropped one, say),
 * nor when the migrations themselves insert rows (emptying would lose them).
 */
function emptiedForReuse(url: string, schema: string): Promise<boolean> {
  return withClient(url, async (client) => {
    const fresh = await freshTables
    const tables = await tablesOf(client, schema)
    const own = ownTables(tables)
    if (fresh === undefined || fresh.seeded || fresh.tables !== tables.join(',') || own.length === 0) {
      return false
    }
    // DELETE, children first, in one transaction: on the few rows a test leaves it takes a few
    // milliseconds where TRUNCATE of every table took 100-300 (new files for each table and index).
    const statements =
      fresh.deleteOrder === undefined
        ? [`truncate table ${own.map((name) => `"${schema}"."${name}"`).join(', ')} restart identity cascade`]
        : [
            ...fresh.deleteOrder.map((name) => `delete from "${schema}"."${name}"`),
            ...fresh.sequences.map((name) => `alter sequence "${schema}"."${name}" restart`),
          ]
    await client.query(`begin; ${statements.join('; ')}; commit`)
    return true
  })
}

/** Runs a suite on SQLite, and on PostgreSQL whenever TEST_POSTGRES_URL is set (skipped with the reason otherwise). */
export function describeEachDatabase(title: string, suite: (database: TestDatabase) => void): void {
  const url = process.env.TEST_POSTGRES_URL
  const skip = url ? false : (process.env.TEST_POSTGRES_SKIP ?? 'TEST_POSTGRES_URL is not set')
  describe(`${title} [sqlite]`, () => suite(sqliteTestDatabase()))
  describe(`${title} [postgres]`, { skip }, () => suite(postgresTestDatabase(url ?? '')))
}
