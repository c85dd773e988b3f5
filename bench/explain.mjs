#!/usr/bin/env node
/**
 * `node bench/explain.mjs [--engines=sqlite,postgres] [--licenses=N]`: the query plans of the benchmark's
 * list queries. Seeds N licenses (default 1M) the way `npm run bench` does — including
 * its post-load statistics: `ANALYZE` on SQLite, `VACUUM ANALYZE` on PostgreSQL (what autovacuum does
 * after a bulk load) — then runs the list of bench/scenarios.mjs (status filter + expirationDate sort,
 * limit 100) through the real KyselyLicenseStore: page 0, a deep page (90%) and starting_after from
 * there. Every SQL statement it sends is printed with its plan: SQLite `EXPLAIN QUERY PLAN`,
 * PostgreSQL `EXPLAIN (ANALYZE, BUFFERS)` (run after the statement itself, so caches are warm).
 */
import { parseListQuery } from '../packages/server/dist/core/list-query.js'
import { KyselyLicenseStore } from '../packages/server/dist/licenses/kysely-license-store.js'
import { licenseListSpec } from '../packages/server/dist/licenses/license-store.js'
import {
  argument,
  explainEachEngine,
  insertExplainProduct,
  kysely,
  printStatement,
  explainProductId as productId,
} from './explain-tools.mjs'
import { createDatabase, licenseSeeder } from './seed.mjs'

const licenses = Number(argument('licenses', '1000000'))
const year = 365 * 86_400_000

async function explainEngine(engine, context) {
  const database = await createDatabase(engine, `explain_${engine}`, context)
  try {
    await insertExplainProduct(database)
    const seconds = await licenseSeeder(database, productId).grow(licenses)
    console.log(
      `\n## ${engine}: ${licenses} licenses seeded in ${seconds.toFixed(1)} s (statistics gathered after the load)\n`,
    )

    const statements = []
    const handle = kysely(database, statements)
    const store = new KyselyLicenseStore(handle.db)
    const filter = `status:in:active|expired,expirationDate:lt:${new Date(Date.now() + year).toISOString()}`
    const base = { limit: 100, filter, sort: 'expirationDate:asc' }
    const list = async (title, query) => {
      statements.length = 0
      const started = performance.now()
      const slice = await store.list({
        request: parseListQuery(query, licenseListSpec),
        productId: undefined,
        now: new Date(),
      })
      const ms = performance.now() - started
      console.log(`### ${title}: ${ms.toFixed(0)} ms, totalCount ${slice.totalCount}\n`)
      for (const statement of [...statements]) {
        await printStatement(handle, engine, statement)
      }
      return slice
    }
    const first = await list('page 0', base)
    const deepPage = Math.floor((first.totalCount * 0.9) / 100)
    const deep = await list(`deep page ${deepPage}`, { ...base, page: deepPage })
    const cursor = deep.items.at(-1)?.id
    await list('starting_after (the last id of the deep page)', { ...base, starting_after: cursor })
    await handle.db.destroy()
    handle.sqlite?.close()
  } finally {
    await database.drop()
  }
}

await explainEachEngine('explain', explainEngine)
