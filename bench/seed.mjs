/**
 * Databases for the benchmark: created and migrated by the server's own code
 * (packages/server/dist/storage), then filled with licenses in bulk straight into the tables,
 * bypassing the API (a million POSTs would take longer than the whole benchmark). Products (with
 * real signing keys) and API keys are made through the server, never here.
 */
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'
import { licenseKeyHint } from '../packages/server/dist/offline/offline-formats.js'
import { connect } from '../packages/server/dist/storage/connect.js'
import { migrateToLatest } from '../packages/server/dist/storage/migrate.js'
import { licenseCountsFill } from '../packages/server/dist/storage/migrations/2026-11-23-90-license-counts.js'

/**
 * A fresh, migrated database named `name`: a SQLite file in `dir`, or a PostgreSQL database on the
 * server at `postgresUrl`. Returns what the server needs to open it and how to remove it.
 */
export async function createDatabase(engine, name, { dir, postgresUrl }) {
  if (engine === 'sqlite') {
    const path = join(dir, `${name}.db`)
    const location = { kind: 'sqlite', path }
    await migrate(location)
    return {
      engine,
      url: `sqlite:${path}`,
      location,
      drop: async () => {
        for (const suffix of ['', '-wal', '-shm']) {
          rmSync(`${path}${suffix}`, { force: true })
        }
      },
    }
  }
  const admin = new pg.Client({ connectionString: postgresUrl })
  await admin.connect()
  try {
    await admin.query(`drop database if exists ${name}`)
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = postgresUrl.replace(/\/[^/]*$/, `/${name}`)
  const location = { kind: 'postgres', url }
  await migrate(location)
  return {
    engine,
    url,
    location,
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresUrl })
      await client.connect()
      try {
        await client.query(`drop database if exists ${name} with (force)`)
      } finally {
        await client.end()
      }
    },
  }
}

async function migrate(location) {
  const connection = connect(location)
  try {
    await migrateToLatest(connection)
  } finally {
    await connection.close()
  }
}

const batchSize = 50_000
/** How many items each request pool keeps (a uniform sample over all seeded licenses). */
const poolSize = 20_000

/**
 * Adds licenses of `productId` to `database`, `count` at a time (`grow`). The licenses were created
 * at random times over the last two years; about 30% never expire, some have expired, every 25th is
 * revoked, maxActivations cycles through null, 1, 3, 5. `pools()` returns uniform samples over
 * every license added so far of what the scenarios need:
 * - `keys`: any license's key (validation answers 200 for every known key),
 * - `ids`: any license's id,
 * - `activeIds`: ids of active licenses (a token needs one),
 * - `unlimitedKeys`: keys of active licenses without an activation limit (activation always succeeds).
 */
/** A seeded customer's name, made from its id so that a scenario can search for it by prefix. */
export function customerName(customerId) {
  return `Buyer ${customerId.slice(4, 12)}`
}

export function licenseSeeder(database, productId, now = Date.now()) {
  const reservoirs = {
    keys: new Reservoir(poolSize),
    ids: new Reservoir(poolSize),
    activeIds: new Reservoir(poolSize),
    unlimitedKeys: new Reservoir(poolSize),
    subscriptions: new Reservoir(poolSize),
    customerIds: new Reservoir(poolSize),
  }
  let seeded = 0
  return {
    /** Adds `count` licenses; resolves to the seconds it took. */
    async grow(count) {
      const started = performance.now()
      const insert =
        database.engine === 'sqlite' ? sqliteInserter(database) : await postgresInserter(database)
      try {
        for (let done = 0; done < count; done += batchSize) {
          const batch = licenseBatch(seeded, Math.min(batchSize, count - done), productId, now)
          seeded += batch.id.length
          for (let i = 0; i < batch.id.length; i++) {
            reservoirs.keys.offer(batch.key[i])
            reservoirs.ids.offer(batch.id[i])
            reservoirs.subscriptions.offer(batch.subscription[i])
            if (batch.customerId[i] !== null) {
              reservoirs.customerIds.offer(batch.customerId[i])
            }
            if (batch.isActive[i]) {
              reservoirs.activeIds.offer(batch.id[i])
              if (batch.maxActivations[i] === null) {
                reservoirs.unlimitedKeys.offer(batch.key[i])
              }
            }
          }
          await insert.batch(batch)
        }
        await insert.finish()
      } finally {
        await insert.close()
      }
      return (performance.now() - started) / 1000
    },
    pools() {
      return Object.fromEntries(Object.entries(reservoirs).map(([name, pool]) => [name, [...pool.items]]))
    },
  }
}

function sqliteInserter(database) {
  const db = new SqliteDatabase(database.location.path)
  // Seeding only: this connection skips fsync and gets a big page cache. The server opens the file
  // with its own settings (WAL, synchronous=FULL) afterwards.
  db.pragma('journal_mode = OFF')
  db.pragma('synchronous = OFF')
  db.pragma('cache_size = -262144')
  // Secondary indexes are rebuilt from their own definitions afterwards: one sorted build each is
  // much faster than a million random inserts into each.
  const indexes = db
    .prepare(
      "select name, sql from sqlite_master where type = 'index' and tbl_name in ('licenses', 'license_metadata') and sql is not null",
    )
    .all()
  for (const index of indexes) {
    db.exec(`drop index ${index.name}`)
  }
  const statement = db.prepare(
    `insert into licenses (id, product_id, key, max_activations, expiration_date, revoked_at,
       activation_count, created_at, updated_at, customer_id, metadata, key_hint)
     values (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
  )
  const customer = db.prepare(
    'insert into customers (id, email, email_lower, name, metadata, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)',
  )
  const insertAll = db.transaction((batch) => {
    for (let i = 0; i < batch.customers.id.length; i++) {
      const at = batch.customers.createdAt[i]
      customer.run(
        batch.customers.id[i],
        batch.customers.email[i],
        batch.customers.email[i],
        customerName(batch.customers.id[i]),
        '{}',
        at,
        at,
      )
    }
    for (let i = 0; i < batch.id.length; i++) {
      statement.run(
        batch.id[i],
        batch.productId,
        batch.key[i],
        batch.maxActivations[i],
        batch.expirationDate[i],
        batch.revokedAt[i],
        batch.createdAt[i],
        batch.updatedAt[i],
        batch.customerId[i],
        batch.metadata[i],
        batch.keyHint[i],
      )
    }
  })
  return {
    batch: async (batch) => insertAll(batch),
    finish: async () => {
      for (const index of indexes) {
        db.exec(index.sql)
      }
      // Statistics for the planner, as `PRAGMA optimize` would gather them in a long-running
      // database (SQLite has no autovacuum daemon to do it).
      db.exec('analyze')
      db.pragma('journal_mode = WAL') // the server's mode, as migrations left it
    },
    close: async () => db.close(),
  }
}

async function postgresInserter(database) {
  const client = new pg.Client({ connectionString: database.location.url })
  await client.connect()
  await client.query("set maintenance_work_mem = '256MB'")
  // As for SQLite: secondary indexes (not those of constraints) are rebuilt after the load.
  const { rows: indexes } = await client.query(
    `select indexname as name, indexdef as sql from pg_indexes i
     where schemaname = current_schema() and tablename = 'licenses'
       and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
  )
  for (const index of indexes) {
    await client.query(`drop index ${index.name}`)
  }
  // The license_counts triggers (migration 90) cost a counter update per row: off for the load (it
  // took 165 s instead of 57 at 1M), then every license counted once, as the migration does.
  await client.query('alter table licenses disable trigger user')
  return {
    // One statement per batch: the columns travel as arrays and unnest() turns them into rows.
    batch: async (batch) => {
      await client.query(
        `insert into customers (id, email, email_lower, name, created_at, updated_at)
         select id, email, email, name, created_at, created_at
         from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[]) as t(id, email, created_at, name)`,
        [
          batch.customers.id,
          batch.customers.email,
          batch.customers.createdAt,
          batch.customers.id.map(customerName),
        ],
      )
      await client.query(
        `insert into licenses (id, product_id, key, max_activations, expiration_date, revoked_at,
           created_at, updated_at, customer_id, metadata, key_hint)
         select id, $2, key, max_activations, expiration_date, revoked_at, created_at, updated_at,
           customer_id, metadata, key_hint
         from unnest($1::text[], $3::text[], $4::int[], $5::timestamptz[], $6::timestamptz[],
           $7::timestamptz[], $8::timestamptz[], $9::text[], $10::jsonb[], $11::text[])
           as t(id, key, max_activations, expiration_date, revoked_at, created_at, updated_at,
             customer_id, metadata, key_hint)`,
        [
          batch.id,
          batch.productId,
          batch.key,
          batch.maxActivations,
          batch.expirationDate,
          batch.revokedAt,
          batch.createdAt,
          batch.updatedAt,
          batch.customerId,
          batch.metadata,
          batch.keyHint,
        ],
      )
    },
    finish: async () => {
      for (const index of indexes) {
        await client.query(index.sql)
      }
      await client.query('delete from license_counts')
      await client.query(licenseCountsFill('postgres'))
      await client.query('alter table licenses enable trigger user')
      // What autovacuum does shortly after a bulk load: statistics and the visibility map.
      await client.query('vacuum analyze licenses')
      await client.query('vacuum analyze license_counts')
    },
    close: async () => client.end(),
  }
}

const day = 86_400_000

/** `size` licenses, numbered from `first`, as columns. */
function licenseBatch(first, size, productId, now) {
  const random = new RandomText(size * 64)
  const span = 729 * day
  const start = now - 730 * day
  const batch = {
    productId,
    id: new Array(size),
    key: new Array(size),
    /** How offline activation requests name the license (the server's licenseKeyHint). */
    keyHint: new Array(size),
    maxActivations: new Array(size),
    expirationDate: new Array(size),
    revokedAt: new Array(size),
    createdAt: new Array(size),
    updatedAt: new Array(size),
    isActive: new Array(size),
    customerId: new Array(size),
    subscription: new Array(size),
    metadata: new Array(size),
    customers: { id: [], email: [], createdAt: [] },
  }
  for (let i = 0; i < size; i++) {
    const n = first + i
    const created = start + Math.floor(Math.random() * span)
    const expires = Math.random() < 0.3 ? null : created + (90 + Math.floor(Math.random() * 1800)) * day
    const revoked = n % 25 === 7 ? created + 3_600_000 : null
    batch.id[i] = `lic_${random.base62(22)}`
    batch.key[i] = random.licenseKey()
    batch.keyHint[i] = licenseKeyHint(batch.key[i])
    batch.maxActivations[i] = [null, 1, 3, 5][n % 4]
    batch.expirationDate[i] = expires === null ? null : new Date(expires).toISOString()
    batch.revokedAt[i] = revoked === null ? null : new Date(revoked).toISOString()
    batch.createdAt[i] = new Date(created).toISOString()
    batch.updatedAt[i] = new Date(revoked ?? created).toISOString()
    batch.isActive[i] = revoked === null && (expires === null || expires > now + day)
    // Every license carries the subscription it came from (the metadata lookup); every fourth one
    // belongs to a customer of its own (the customerId lookup).
    batch.subscription[i] = `sub_${random.base62(14)}`
    batch.metadata[i] = JSON.stringify({ stripeSubscriptionId: batch.subscription[i], plan: 'pro' })
    batch.customerId[i] = n % 4 === 1 ? `cus_${random.base62(22)}` : null
    if (batch.customerId[i] !== null) {
      batch.customers.id.push(batch.customerId[i])
      batch.customers.email.push(`${batch.customerId[i].toLowerCase()}@bench.example`)
      batch.customers.createdAt.push(batch.createdAt[i])
    }
  }
  return batch
}

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** Random ids and keys in the server's formats (core/ids.ts), from one buffer of random bytes. */
class RandomText {
  #bytes
  #at = 0

  constructor(size) {
    this.#bytes = randomBytes(size)
  }

  #next() {
    if (this.#at === this.#bytes.length) {
      this.#bytes = randomBytes(this.#bytes.length)
      this.#at = 0
    }
    return this.#bytes[this.#at++]
  }

  base62(length) {
    let out = ''
    while (out.length < length) {
      const byte = this.#next()
      if (byte < 248) {
        out += base62[byte % 62]
      }
    }
    return out
  }

  /** 25 Crockford base32 characters in five dash groups. */
  licenseKey() {
    let out = ''
    for (let group = 0; group < 5; group++) {
      if (group > 0) {
        out += '-'
      }
      for (let i = 0; i < 5; i++) {
        out += crockford[this.#next() & 31]
      }
    }
    return out
  }
}

/** A uniform sample of at most `size` of the items offered (reservoir sampling). */
class Reservoir {
  items = []
  #seen = 0
  #size

  constructor(size) {
    this.#size = size
  }

  offer(item) {
    this.#seen++
    if (this.items.length < this.#size) {
      this.items.push(item)
      return
    }
    const slot = Math.floor(Math.random() * this.#seen)
    if (slot < this.#size) {
      this.items[slot] = item
    }
  }
}
