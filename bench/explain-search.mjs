#!/usr/bin/env node
/**
 * `node bench/explain-search.mjs [--engines=sqlite,postgres] [--licenses=N]`: the query plans of
 * `GET /search`. Seeds N licenses (default 1M) the way `npm run bench` does (a customer with a name
 * for every fourth license) plus 10,000 machines, then runs each kind of query through the real
 * SearchService and KyselySearchStore and prints every statement with its plan (SQLite
 * `EXPLAIN QUERY PLAN`, PostgreSQL `EXPLAIN (ANALYZE, BUFFERS)`) and its median time alone.
 */
import { KyselySearchStore } from '../packages/server/dist/search/kysely-search-store.js'
import { SearchService } from '../packages/server/dist/search/search-service.js'
import {
  argument,
  explainEachEngine,
  insertExplainProduct,
  kysely,
  printStatement,
  explainProductId as productId,
} from './explain-tools.mjs'
import { createDatabase, customerName, licenseSeeder } from './seed.mjs'

const licenses = Number(argument('licenses', '1000000'))
const machines = 10_000
const admin = { role: 'admin', apiKeyId: 'key_explain' }
const product = { role: 'product', apiKeyId: 'key_explain', productId }

async function explainEngine(engine, context) {
  const database = await createDatabase(engine, `explain_search_${engine}`, context)
  try {
    await insertExplainProduct(database)
    const seeder = licenseSeeder(database, productId)
    const seconds = await seeder.grow(licenses)
    const pools = seeder.pools()
    const statements = []
    const handle = kysely(database, statements)
    const now = new Date().toISOString()
    const machineRows = pools.ids.slice(0, machines).map((licenseId, i) => ({
      id: `act_explain${String(i).padStart(13, '0')}`,
      license_id: licenseId,
      product_id: productId,
      fingerprint: `fp-${i.toString(16).padStart(8, '0')}`,
      name: `Workstation ${i}`,
      created_at: now,
      last_seen_at: now,
      last_heartbeat_at: now,
    }))
    for (let start = 0; start < machineRows.length; start += 500) {
      await handle.db
        .insertInto('activations')
        .values(machineRows.slice(start, start + 500))
        .execute()
    }
    if (engine === 'postgres') {
      await handle.pool.query('vacuum analyze activations')
      await handle.pool.query('vacuum analyze customers')
    } else {
      handle.sqlite.exec('analyze')
    }
    console.log(
      `\n## ${engine}: ${licenses} licenses seeded in ${seconds.toFixed(1)} s, ${machines} machines\n`,
    )
    const search = new SearchService({ store: new KyselySearchStore(handle.db) })
    const queries = [
      ['a key as stored', pools.keys[0]],
      ['a key as typed (lower case, no dashes)', pools.keys[1].replaceAll('-', '').toLowerCase()],
      ['a license id', pools.ids[2]],
      ['a customer id', pools.customerIds[0]],
      ['an email', `${pools.customerIds[1].toLowerCase()}@bench.example`],
      ['a name prefix shared by many ("buyer ab")', customerName(pools.customerIds[2]).slice(0, 8)],
      ['a machine fingerprint', 'fp-00000010'],
      ['a machine id', machineRows[5].id],
    ]
    for (const [title, q] of queries) {
      for (const [who, principal] of [
        ['admin', admin],
        ['product key', product],
      ]) {
        statements.length = 0
        const started = performance.now()
        const hits = await search.search(principal, q)
        const ms = performance.now() - started
        console.log(`### ${title}, ${who}: ${ms.toFixed(1)} ms, ${hits.length} hits\n`)
        for (const statement of [...statements]) {
          await printStatement(handle, engine, statement, 2)
        }
      }
    }
    await handle.db.destroy()
    handle.sqlite?.close()
  } finally {
    await database.drop()
  }
}

await explainEachEngine('explain-search', explainEngine)
