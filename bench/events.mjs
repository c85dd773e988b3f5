/**
 * Events in the benchmark: what writing them costs the write paths, and how fast one server
 * delivers webhooks.
 *
 * - `withoutEventRows(database)`: a trigger (bench only, never in Keyturn) that drops every row
 *   inserted into `events` (SQLite `RAISE(IGNORE)`, PostgreSQL a BEFORE INSERT trigger returning
 *   NULL). The server still builds each event and runs the same transaction, but writes no event row
 *   (nor its index entries): the `-no-events` scenarios measure the write paths without it.
 * - `measureDeliveries(...)`: a webhook endpoint pointing at a receiver in this process, `count`
 *   events written straight into the outbox in one transaction, and the rate at which they arrive
 *   (from the first to the last request), while the server's four delivery loops dispatch, sign,
 *   send and record them.
 */
import { randomBytes } from 'node:crypto'
import http from 'node:http'
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'
import { api, apiOk } from './net.mjs'

async function onDatabase(location, sqliteStatements, postgresStatements) {
  if (location.kind === 'sqlite') {
    const db = new SqliteDatabase(location.path)
    try {
      db.pragma('busy_timeout = 10000')
      for (const statement of sqliteStatements) {
        db.exec(statement)
      }
    } finally {
      db.close()
    }
    return
  }
  const client = new pg.Client({ connectionString: location.url })
  await client.connect()
  try {
    for (const statement of postgresStatements) {
      await client.query(statement)
    }
  } finally {
    await client.end()
  }
}

/** Installs the row-dropping trigger on `events`; resolves to the function that removes it. */
export async function withoutEventRows(location) {
  await onDatabase(
    location,
    ['create trigger bench_no_event_rows before insert on events begin select raise(ignore); end'],
    [
      'create or replace function bench_no_event_row() returns trigger language plpgsql as $$ begin return null; end $$',
      'create trigger bench_no_event_rows before insert on events for each row execute function bench_no_event_row()',
    ],
  )
  return () =>
    onDatabase(
      location,
      ['drop trigger if exists bench_no_event_rows'],
      ['drop trigger if exists bench_no_event_rows on events'],
    )
}

/** A receiver on loopback answering 204 to everything, noting when each request arrived. */
async function startReceiver() {
  const arrivals = []
  const server = http.createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      arrivals.push(performance.now())
      response.writeHead(204).end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    arrivals,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

/** Writes `count` license.updated events (the license's JSON as data) into the outbox at once. */
async function writeEvents(location, productId, data, count) {
  const now = new Date().toISOString()
  const rows = Array.from({ length: count }, () => [
    `evt_${randomBytes(16).toString('base64url')}`,
    'license.updated',
    now,
    productId,
    JSON.stringify(data),
  ])
  if (location.kind === 'sqlite') {
    const db = new SqliteDatabase(location.path)
    try {
      db.pragma('busy_timeout = 10000')
      const insert = db.prepare(
        `insert into events (id, type, occurred_at, product_id, actor_type, actor_id, actor_role, request_id, data, dispatched_at)
         values (?, ?, ?, ?, 'system', 'keyturn', null, null, ?, null)`,
      )
      db.transaction(() => {
        for (const row of rows) {
          insert.run(...row)
        }
      })()
    } finally {
      db.close()
    }
    return
  }
  const client = new pg.Client({ connectionString: location.url })
  await client.connect()
  try {
    await client.query('begin')
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000)
      await client.query(
        `insert into events (id, type, occurred_at, product_id, actor_type, actor_id, actor_role, request_id, data, dispatched_at)
         select id, type, occurred_at::timestamptz, product_id, 'system', 'keyturn', null, null, data::jsonb, null
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) as t(id, type, occurred_at, product_id, data)`,
        [0, 1, 2, 3, 4].map((column) => chunk.map((row) => row[column])),
      )
    }
    await client.query('commit')
  } finally {
    await client.end()
  }
}

/**
 * Webhook delivery throughput of the server at `url`: resolves to a scenario row's measurements
 * (`rps` = deliveries per second), or `{ unavailable }` without webhooks.
 */
export async function measureDeliveries({ url, adminKey, productId, database, licenseId, count }) {
  const receiver = await startReceiver()
  try {
    const created = await api(url, adminKey, 'POST', '/api/v0/webhook-endpoints', {
      url: receiver.url,
      eventTypes: ['license.*'],
      productId,
    })
    if (created.status === 404) {
      return { unavailable: 'no webhook endpoints yet' }
    }
    if (created.status !== 201) {
      throw new Error(`creating the endpoint answered ${created.status}: ${JSON.stringify(created.body)}`)
    }
    try {
      const license = await apiOk(url, adminKey, 'GET', `/api/v0/licenses/${licenseId}`)
      await writeEvents(database, productId, license, count)
      const deadline = Date.now() + 300_000
      while (receiver.arrivals.length < count) {
        if (Date.now() > deadline) {
          return {
            problem: `only ${receiver.arrivals.length} of ${count} deliveries arrived within 300 s`,
            requests: receiver.arrivals.length,
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const first = receiver.arrivals[0]
      const last = receiver.arrivals[count - 1]
      return {
        rps: ((count - 1) * 1000) / (last - first),
        requests: count,
        note: `${count} events, one server, receiver on loopback`,
      }
    } finally {
      await api(url, adminKey, 'DELETE', `/api/v0/webhook-endpoints/${created.body.id}`)
    }
  } finally {
    await receiver.close()
  }
}
