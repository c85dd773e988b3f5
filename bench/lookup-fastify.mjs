/**
 * The one-lookup ceiling ("one round trip per validation"): bare Fastify (no logger, no
 * hooks) with one route at validate's path that reads the license by key and product with one
 * prepared statement of the engine's driver and answers a small JSON object through a response
 * schema. No authentication, rate limit, headers, events or policy: the least work any server
 * that reads the database once per validation does. Its rate over bare Fastify's bounds what
 * validate by key can reach on that engine without a cache. Run by bench/run.mjs as
 * `node bench/lookup-fastify.mjs <sqlite-path | postgres-url>`; stops on SIGTERM.
 */
import SqliteDatabase from 'better-sqlite3'
import Fastify from 'fastify'
import pg from 'pg'

const target = process.argv[2] ?? ''
const lookupSql = 'select id, expiration_date, revoked_at from licenses where key = $1 and product_id = $2'

/** `(key, productId) => Promise<row | undefined>` on the engine `target` names. */
function lookupOn(location) {
  if (location.startsWith('postgres')) {
    // As many connections as the server's pool.
    const pool = new pg.Pool({ connectionString: location, max: 10 })
    return async (key, productId) =>
      (await pool.query({ name: 'lookup', text: lookupSql, values: [key, productId] })).rows[0]
  }
  // Read-only; busy_timeout as the server sets it (storage/connect.ts).
  const db = new SqliteDatabase(location, { readonly: true })
  db.pragma('busy_timeout = 5000')
  const statement = db.prepare(lookupSql.replaceAll(/\$\d/g, '?'))
  return async (key, productId) => statement.get(key, productId)
}

const lookup = lookupOn(target)
const app = Fastify({ logger: false })
app.post(
  '/api/v0/licenses/validate',
  {
    schema: {
      body: {
        type: 'object',
        properties: { key: { type: 'string', maxLength: 64 }, productId: { type: 'string', maxLength: 64 } },
        required: ['key', 'productId'],
      },
      response: {
        200: {
          type: 'object',
          properties: { valid: { type: 'boolean' }, licenseId: { type: ['string', 'null'] } },
          required: ['valid', 'licenseId'],
        },
      },
    },
  },
  async (request) => {
    const row = await lookup(request.body.key, request.body.productId)
    return { valid: row !== undefined && row.revoked_at === null, licenseId: row?.id ?? null }
  },
)
app.get('/readyz', async () => ({ ready: true }))

const url = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`one-lookup Fastify listening on ${url}\n`)
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    void app.close().then(() => process.exit(0))
  })
}
