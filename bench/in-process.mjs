/**
 * In-process measurements, run in a child process of their own (bench/run.mjs starts it with a JSON
 * spec file as argv[2] and reads one JSON line back): the raw ceilings (database operations, EdDSA
 * signing and verification) and the client library's offline `validateLicenseToken` and license
 * guard `check()` (the server unreachable: judged from a stored signed answer).
 *
 * Every operation runs for a warm-up, then for the measured time; each result is
 * `{ opsPerSecond, p50, p99 }` with latencies in milliseconds.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto'
import { readFileSync } from 'node:fs'
import SqliteDatabase from 'better-sqlite3'
import { importSPKI, jwtVerify, SignJWT } from 'jose'
import pg from 'pg'
import {
  createLicenseGuard,
  KeyturnConnectionError,
  validateLicenseToken,
  verifyLicenseFile,
} from '../packages/client/dist/client/src/index.js'
import { licenseTokenIssuer, licenseTokenType } from '../packages/protocol/dist/index.js'

const spec = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8'))
const seconds = spec.seconds
const warmupSeconds = Math.min(1, seconds / 2)

function summary(latencies, elapsedMs, concurrency = 1) {
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
  return {
    opsPerSecond: (latencies.length / elapsedMs) * 1000,
    p50: at(0.5),
    p99: at(0.99),
    concurrency,
  }
}

/** A synchronous operation, one after another. */
function measureSync(op) {
  for (const end = performance.now() + warmupSeconds * 1000; performance.now() < end; ) {
    op()
  }
  const latencies = []
  const started = performance.now()
  const end = started + seconds * 1000
  let now = started
  while (now < end) {
    op()
    const after = performance.now()
    latencies.push(after - now)
    now = after
  }
  return summary(latencies, now - started)
}

/** An asynchronous operation, `concurrency` at a time. */
async function measureAsync(op, concurrency = 1) {
  const loop = async (end, latencies) => {
    while (performance.now() < end) {
      const before = performance.now()
      await op()
      latencies?.push(performance.now() - before)
    }
  }
  const warmupEnd = performance.now() + warmupSeconds * 1000
  await Promise.all(Array.from({ length: concurrency }, () => loop(warmupEnd)))
  const latencies = []
  const started = performance.now()
  const end = started + seconds * 1000
  await Promise.all(Array.from({ length: concurrency }, () => loop(end, latencies)))
  return summary(latencies, performance.now() - started, concurrency)
}

const randomItem = (items) => items[Math.floor(Math.random() * items.length)]
const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** A license row's values, like bench/seed.mjs makes them (column order of the insert below). */
function newLicenseValues(productId) {
  const bytes = randomBytes(41)
  const id = `lic_${bytes.subarray(0, 16).toString('base64url').replace(/[-_]/g, 'x').slice(0, 22)}`
  let key = ''
  for (let i = 0; i < 25; i++) {
    key += (i > 0 && i % 5 === 0 ? '-' : '') + crockford[(bytes[16 + i] ?? 0) & 31]
  }
  const now = new Date().toISOString()
  return [id, productId, key, 3, '2031-01-01T00:00:00.000Z', null, now, now]
}

const insertLicense = `insert into licenses (id, product_id, key, max_activations, expiration_date, revoked_at,
  created_at, updated_at)`

/** better-sqlite3 on the benchmark's database, with the pragmas the server uses (storage/connect.ts). */
function sqliteCeilings() {
  const db = new SqliteDatabase(spec.path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  const lookup = db.prepare('select * from licenses where key = ?')
  const insert = db.prepare(`${insertLicense} values (?, ?, ?, ?, ?, ?, ?, ?)`)
  try {
    return {
      pointLookup: measureSync(() => lookup.get(randomItem(spec.keys))),
      // Autocommit: every insert is its own transaction, committed (fsync'd under synchronous=FULL).
      insertCommit: measureSync(() => insert.run(...newLicenseValues(spec.productId))),
    }
  } finally {
    db.close()
  }
}

/** pg with as many connections as the server's pool (10), as many operations in flight. */
async function postgresCeilings() {
  const concurrency = 10
  const pool = new pg.Pool({ connectionString: spec.url, max: concurrency })
  try {
    return {
      pointLookup: await measureAsync(
        () =>
          pool.query({
            name: 'lookup',
            text: 'select * from licenses where key = $1',
            values: [randomItem(spec.keys)],
          }),
        concurrency,
      ),
      insertCommit: await measureAsync(
        () =>
          pool.query({
            name: 'insert',
            text: `${insertLicense} values ($1, $2, $3, $4, $5, $6, $7, $8)`,
            values: newLicenseValues(spec.productId),
          }),
        concurrency,
      ),
    }
  } finally {
    await pool.end()
  }
}

/**
 * EdDSA with jose and node:crypto, and the client's validateLicenseToken and verifyLicenseFile on a
 * server-issued token and license file.
 */
async function cryptoMeasurements() {
  const { privateKey } = generateKeyPairSync('ed25519')
  const issuedAt = Math.floor(Date.now() / 1000)
  // The claims the server's TokenService signs (tokens/token-service.ts), with a key kept imported.
  const joseSign = await measureAsync(() =>
    new SignJWT({
      licenseId: 'lic_4nq5xAuQtOAJkbrYBhX36W',
      expirationDate: new Date((issuedAt + 2_592_000) * 1000).toISOString(),
      productId: spec.productId,
      createdAt: new Date(issuedAt * 1000).toISOString(),
    })
      .setProtectedHeader({
        alg: 'EdDSA',
        typ: licenseTokenType,
        kid: 'sZGscGjBnJAaxOaoZdp834i3qn58CCFBBFq6OVdCe2o',
      })
      .setIssuer(licenseTokenIssuer)
      .setSubject('lic_4nq5xAuQtOAJkbrYBhX36W')
      .setAudience(spec.productId)
      .setIssuedAt(issuedAt)
      .setNotBefore(issuedAt)
      .setExpirationTime(issuedAt + 2_592_000)
      .setJti('tok_4nq5xAuQtOAJkbrYBhX36W')
      .sign(privateKey),
  )

  const publicKey = await importSPKI(spec.publicKey, 'EdDSA')
  const joseVerify = await measureAsync(() => jwtVerify(spec.token, publicKey, { algorithms: ['EdDSA'] }))

  const [header, payload, signature] = spec.token.split('.')
  const signingInput = Buffer.from(`${header}.${payload}`)
  const signatureBytes = Buffer.from(signature ?? '', 'base64url')
  const publicKeyObject = createPublicKey(spec.publicKey)
  if (!verify(null, signingInput, publicKeyObject, signatureBytes)) {
    throw new Error('the server-issued token does not verify with node:crypto')
  }
  const nodeVerify = measureSync(() => verify(null, signingInput, publicKeyObject, signatureBytes))

  const options = { productId: spec.productId, publicKey: spec.publicKey, token: spec.token }
  await validateLicenseToken(options) // throws if the token is not valid
  const clientValidate = await measureAsync(() => validateLicenseToken(options))
  const fileOptions = { productId: spec.productId, publicKey: spec.publicKey }
  await verifyLicenseFile(spec.licenseFile, fileOptions) // throws if the file is not valid
  const clientVerifyFile = await measureAsync(() => verifyLicenseFile(spec.licenseFile, fileOptions))
  const guardCheck = spec.guard === undefined ? undefined : await measureGuardCheck(spec)
  return { joseSign, joseVerify, nodeVerify, clientValidate, clientVerifyFile, guardCheck }
}

/**
 * The guard's `check()` while the server is unreachable: the client port fails at once with a
 * connection error (no network wait is measured), and the stored signed answer is read back,
 * verified and judged, as on every offline check.
 */
async function measureGuardCheck(spec) {
  const stored = new Map([['proof', JSON.stringify({ answer: spec.guard.proof, fingerprint: null })]])
  const guard = createLicenseGuard({
    client: {
      validateLicenseWithProof: async () => {
        throw new KeyturnConnectionError('unreachable (benchmark)')
      },
    },
    productId: spec.productId,
    publicKey: spec.publicKey,
    licenseKey: spec.guard.licenseKey,
    storage: {
      get: (key) => stored.get(key) ?? null,
      set: (key, value) => void stored.set(key, value),
      delete: (key) => void stored.delete(key),
    },
    storageKey: 'proof',
  })
  const first = await guard.check()
  if (first.state === 'invalid') {
    throw new Error(`the guard's stored answer does not hold: ${first.reason}`)
  }
  return measureAsync(() => guard.check())
}

const measurements = {
  sqlite: async () => sqliteCeilings(),
  postgres: postgresCeilings,
  crypto: cryptoMeasurements,
}
const measure = measurements[spec.kind]
if (measure === undefined) {
  throw new Error(`unknown measurement kind ${spec.kind}`)
}
process.stdout.write(`${JSON.stringify(await measure())}\n`)
