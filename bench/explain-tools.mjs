/**
 * What the explain scripts (bench/explain.mjs, bench/explain-search.mjs) share: a Kysely on the
 * bench database that records every statement it sends, the median time of one statement run on
 * its own, and its plan (SQLite `EXPLAIN QUERY PLAN`, PostgreSQL `EXPLAIN (ANALYZE, BUFFERS)`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import { cleanupAll, installExitHandlers } from './cleanup.mjs'
import { startPostgres } from './postgres.mjs'

export const argument = (name, fallback) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback

/** A Kysely on `database` whose statements are pushed onto `statements` as `{ sql, parameters }`. */
export function kysely(database, statements) {
  const log = (event) => {
    if (event.level === 'query') {
      statements.push({ sql: event.query.sql, parameters: event.query.parameters })
    }
  }
  if (database.engine === 'sqlite') {
    const sqlite = new SqliteDatabase(database.location.path)
    return { db: new Kysely({ dialect: new SqliteDialect({ database: sqlite }), log }), sqlite }
  }
  const pool = new pg.Pool({ connectionString: database.location.url, max: 1 })
  return { db: new Kysely({ dialect: new PostgresDialect({ pool }), log }), pool }
}

/** The product every seeded license of the explain scripts belongs to. */
export const explainProductId = 'prd_explainExplainExplain1'

/** Inserts the explain product into the bench database, before its licenses are seeded. */
export async function insertExplainProduct(database) {
  const seed = kysely(database, [])
  const now = new Date().toISOString()
  await seed.db
    .insertInto('products')
    .values({
      id: explainProductId,
      name: 'Explain',
      suspended_at: null,
      client_token_ttl: 86_400,
      created_at: now,
      updated_at: now,
    })
    .execute()
  await seed.db.destroy()
  seed.sqlite?.close()
}

/** The median of 5 timed runs of one statement on its own (after the warm run of the list itself). */
export async function timeStatement(handle, engine, statement) {
  const runs = []
  for (let i = 0; i < 5; i++) {
    const started = performance.now()
    if (engine === 'sqlite') {
      handle.sqlite.prepare(statement.sql).all(...statement.parameters)
    } else {
      await handle.pool.query(statement.sql, statement.parameters)
    }
    runs.push(performance.now() - started)
  }
  return runs.sort((a, b) => a - b)[2]
}

/** The statement's plan as text, run after the statement itself (caches warm). */
export async function plan(handle, engine, statement) {
  if (engine === 'sqlite') {
    const rows = handle.sqlite.prepare(`explain query plan ${statement.sql}`).all(...statement.parameters)
    return rows.map((row) => `${'  '.repeat(row.parent === 0 ? 0 : 1)}${row.detail}`).join('\n')
  }
  const result = await handle.pool.query(`explain (analyze, buffers) ${statement.sql}`, statement.parameters)
  return result.rows.map((row) => row['QUERY PLAN']).join('\n')
}

/** Prints one statement as a Markdown SQL block: its text, parameters, median time alone and plan. */
export async function printStatement(handle, engine, statement, digits = 1) {
  console.log('```sql')
  console.log(statement.sql.replace(/\s+/g, ' ').trim())
  console.log(`-- parameters: ${JSON.stringify(statement.parameters)}`)
  console.log(
    `-- ${(await timeStatement(handle, engine, statement)).toFixed(digits)} ms (median of 5 runs alone)`,
  )
  console.log(await plan(handle, engine, statement))
  console.log('```\n')
}

/**
 * Runs `explainEngine(engine, { dir, postgresUrl })` for each engine of `--engines` (default both),
 * starting a throwaway PostgreSQL when asked for, and cleans up after.
 */
export async function explainEachEngine(name, explainEngine) {
  installExitHandlers()
  const dir = mkdtempSync(join(tmpdir(), `keyturn-${name}-`))
  try {
    let postgresUrl
    for (const engine of argument('engines', 'sqlite,postgres').split(',')) {
      if (engine === 'postgres' && postgresUrl === undefined) {
        const postgres = await startPostgres()
        if (postgres.skip !== undefined) {
          console.log(`PostgreSQL skipped: ${postgres.skip}`)
          continue
        }
        postgresUrl = postgres.url
      }
      await explainEngine(engine, { dir, postgresUrl })
    }
  } finally {
    await cleanupAll()
    rmSync(dir, { recursive: true, force: true })
  }
}
