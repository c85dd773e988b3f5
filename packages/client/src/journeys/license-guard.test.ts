/**
 * @module The license guard against a real `keyturn serve` process: stopped to make an outage and
 * started again on the same port and database, with the guard's clock injected (the server keeps
 * the real one; the guard's clock is moved relative to it).
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import {
  createLicenseGuard,
  InvalidOptionError,
  KeyturnClient,
  type LicenseGuardOptions,
  type LicenseGuardResult,
  type LicenseGuardStateChange,
  localStorageGuardStorage,
} from '@keyturn/client'
import { fileGuardStorage } from '@keyturn/client/node'
import { serveHttp } from '@keyturn/server/testing/listening-app'
import { sqliteServerEnvironment } from '@keyturn/server/testing/server-environments'
import { startServerProcess } from '@keyturn/server/testing/server-process'

const adminKey = 'kt_admin_license-guard-journey-000000001'
const hour = 3600

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

async function api(base: string, secret: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v0${path}`, {
    method,
    headers: {
      authorization: `Bearer ${secret}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const json = (await res.json()) as Record<string, unknown>
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

async function stop(child: ChildProcess) {
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await exited
}

function summary(result: LicenseGuardResult) {
  return [result.state, result.reason]
}

/** A guard clock: the real time moved by `offset` seconds. */
function movableClock() {
  let offset = 0
  return {
    now: () => new Date(Date.now() + offset * 1000),
    set(seconds: number) {
      offset = seconds
    },
  }
}

describe('the license guard against keyturn serve', () => {
  it('is valid online, valid then in grace then invalid offline, and valid again when the server is back; 4xx, 5xx, forged answers and a tampered store', async (t: TestContext) => {
    const env = {
      ...(await sqliteServerEnvironment().fresh(t)),
      KEYTURN_ADMIN_KEY: adminKey,
      PORT: String(await freePort()),
    }
    let server = await startServerProcess(t, env)
    const base = server.url
    const product = await api(base, adminKey, 'POST', '/products', { name: 'Guarded' })
    const productId = String(product.id)
    const policyGrace = await api(base, adminKey, 'POST', '/policies', {
      productId,
      name: 'Hourly check-in, two hours of grace',
      checkInInterval: hour,
      gracePeriod: 2 * hour,
    })
    const noGrace = await api(base, adminKey, 'POST', '/policies', {
      productId,
      name: 'Hourly check-in',
      checkInInterval: hour,
    })
    const license = await api(base, adminKey, 'POST', '/licenses', { productId, policyId: policyGrace.id })
    const other = await api(base, adminKey, 'POST', '/licenses', { productId, policyId: noGrace.id })
    const clientKey = await api(base, adminKey, 'POST', '/api-keys', {
      name: 'app',
      role: 'client',
      productId,
    })
    const file = await api(base, adminKey, 'POST', `/licenses/${license.id}/license-file`, {})
    const publicKey = String(product.publicKey)
    const folder = mkdtempSync(join(tmpdir(), 'keyturn-guard-'))
    t.after(() => rmSync(folder, { recursive: true, force: true }))
    const client = new KeyturnClient({ baseUrl: base, apiKey: String(clientKey.secret), maxRetries: 0 })
    const clock = movableClock()
    const changes: LicenseGuardStateChange[] = []
    const guardFor = (options: Partial<LicenseGuardOptions> = {}) =>
      createLicenseGuard({
        client,
        productId,
        publicKey,
        licenseKey: String(license.key),
        storage: fileGuardStorage({ directory: join(folder, 'main') }),
        gracePeriod: 60, // the policy's two hours win
        now: clock.now,
        ...options,
      })
    const guard = guardFor({ onChange: (change) => changes.push(change) })
    const otherGuard = guardFor({
      licenseKey: String(other.key),
      storage: fileGuardStorage({ directory: join(folder, 'other') }),
      gracePeriod: 600, // its policy sets none: the option decides
    })

    const online = await guard.check()
    assert.deepEqual(summary(online), ['valid', 'online'])
    assert.equal(online.license?.id, license.id)
    const checkInBy = online.validUntil?.getTime() ?? Number.NaN
    assert.ok(Math.abs(checkInBy - (Date.now() + hour * 1000)) < 60_000, 'valid until the check-in deadline')
    const otherOnline = await otherGuard.check()
    assert.deepEqual(summary(otherOnline), ['valid', 'online'])

    // Only a definitive answer ends the fallback: 5xx and answers not signed by the product's key
    // are outages; a refusing 4xx is not; a store edited by hand counts as no store.
    const third = await api(base, adminKey, 'POST', '/licenses', { productId, policyId: noGrace.id })
    const tamperFolder = join(folder, 'tamper')
    const storage = fileGuardStorage({ directory: tamperFolder })
    const guardAt = (baseUrl: string, apiKey = String(clientKey.secret)) =>
      createLicenseGuard({
        client: new KeyturnClient({ baseUrl, apiKey, maxRetries: 0 }),
        productId,
        publicKey: [String(product.publicKey)],
        licenseKey: String(third.key).toLowerCase(), // canonicalised like the server does
        storage,
      })
    assert.deepEqual(summary(await guardAt(base).check()), ['valid', 'online'])

    const unavailable = await serveHttp(t, (_request, response) => {
      response.writeHead(503, { 'content-type': 'application/problem+json' })
      response.end(JSON.stringify({ type: 'about:blank', status: 503, code: 'unavailable', detail: 'down' }))
    })
    assert.deepEqual(summary(await guardAt(unavailable).check()), ['valid', 'offline'], '5xx: offline')
    const liar = await serveHttp(t, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ isValid: false, reason: 'revoked' }))
    })
    assert.deepEqual(summary(await guardAt(liar).check()), ['valid', 'offline'], 'unsigned: not our server')
    assert.deepEqual(
      summary(await guardAt(base, 'kt_client_not-a-real-key-0000000000000').check()),
      ['invalid', 'request_refused'],
      'a definitive 4xx is not an outage',
    )

    const [name] = readdirSync(tamperFolder)
    assert.ok(name !== undefined)
    // Move the signed answer's deadline a year on, as someone editing the file would.
    const record = JSON.parse(readFileSync(join(tamperFolder, name), 'utf8'))
    const answer = JSON.parse(record.answer)
    const body = JSON.parse(answer.body)
    assert.ok(typeof body.checkInBy === 'string')
    body.checkInBy = new Date(Date.now() + 365 * 86_400_000).toISOString()
    answer.body = JSON.stringify(body)
    writeFileSync(join(tamperFolder, name), JSON.stringify({ ...record, answer: JSON.stringify(answer) }))
    assert.deepEqual(summary(await guardAt(unavailable).check()), ['invalid', 'no_proof'])
    writeFileSync(join(tamperFolder, name), 'not json')
    assert.deepEqual(summary(await guardAt(unavailable).check()), ['invalid', 'no_proof'])

    // A clock wound back an hour while the server answers: its signed time gives it away.
    clock.set(-hour)
    assert.deepEqual(summary(await guard.check()), ['invalid', 'clock_tampered'])
    clock.set(0)

    // The outage: the server process is gone.
    await stop(server.child)
    assert.deepEqual(summary(await guard.check()), ['valid', 'offline'])
    clock.set(hour + 60)
    const grace = await guard.check()
    assert.deepEqual(summary(grace), ['grace', 'check_in_overdue'])
    assert.equal(
      grace.validUntil?.getTime(),
      checkInBy + 2 * hour * 1000,
      "the policy's grace, not the option's",
    )
    const otherGrace = await otherGuard.check()
    assert.deepEqual(summary(otherGrace), ['grace', 'check_in_overdue'])
    assert.equal(otherGrace.validUntil?.getTime(), (otherOnline.validUntil?.getTime() ?? 0) + 600_000)
    clock.set(hour + 700)
    assert.deepEqual(summary(await otherGuard.check()), ['invalid', 'grace_expired'], 'the option’s 600 s')
    assert.deepEqual(summary(await guard.check()), ['grace', 'check_in_overdue'])
    clock.set(3 * hour + 60)
    const expired = await guard.check()
    assert.deepEqual(summary(expired), ['invalid', 'grace_expired'])
    assert.deepEqual(expired.entitlements, [])
    clock.set(-hour)
    assert.deepEqual(summary(await guard.check()), ['invalid', 'clock_tampered'])

    // A license file (e.g. from offline activation) with no stored answer: it is the proof.
    clock.set(0)
    const fromFile = guardFor({
      storage: fileGuardStorage({ directory: join(folder, 'empty') }),
      licenseFile: String(file.licenseFile),
    })
    assert.deepEqual(summary(await fromFile.check()), ['valid', 'offline'])
    const noProof = guardFor({ storage: fileGuardStorage({ directory: join(folder, 'empty') }) })
    assert.deepEqual(summary(await noProof.check()), ['invalid', 'no_proof'])

    // The server comes back on the same port and database.
    server = await startServerProcess(t, env)
    assert.equal(server.url, base)
    assert.deepEqual(summary(await guard.check()), ['valid', 'online'])
    assert.deepEqual(
      changes.map(({ current }) => `${current.state}:${current.reason}`),
      [
        'valid:online',
        'invalid:clock_tampered',
        'valid:offline',
        'grace:check_in_overdue',
        'invalid:grace_expired',
        'invalid:clock_tampered',
        'valid:online',
      ],
      'onChange after each change of state or reason, never for the same one',
    )

    // Revoked while online: invalid at once, and offline afterwards too (the signed "revoked" is kept).
    await api(base, adminKey, 'POST', `/licenses/${license.id}/revoke`)
    assert.deepEqual(summary(await guard.check()), ['invalid', 'revoked'])
    const cutOff = guardFor({
      client: new KeyturnClient({
        baseUrl: `http://127.0.0.1:${await freePort()}`,
        apiKey: 'x',
        maxRetries: 0,
      }),
    })
    assert.deepEqual(summary(await cutOff.check()), ['invalid', 'revoked'])
    const unknown = guardFor({
      licenseKey: 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ',
      storage: fileGuardStorage({ directory: join(folder, 'unknown') }),
    })
    assert.deepEqual(summary(await unknown.check()), ['invalid', 'license_not_found'])
  })

  it('refuses invalid options with InvalidOptionError', async () => {
    const memory = new Map<string, string>()
    const storage = localStorageGuardStorage({
      getItem: (key) => memory.get(key) ?? null,
      setItem: (key, value) => void memory.set(key, value),
      removeItem: (key) => void memory.delete(key),
    })
    const valid: LicenseGuardOptions = {
      client: new KeyturnClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'x', maxRetries: 0 }),
      productId: 'prd_x',
      publicKey: 'not read until a check',
      licenseKey: 'KEY',
      storage,
    }
    for (const [option, value] of [
      ['gracePeriod', Number.NaN],
      ['gracePeriod', Number.POSITIVE_INFINITY],
      ['gracePeriod', -1],
      ['clockToleranceSeconds', Number.NaN],
      ['clockToleranceSeconds', Number.POSITIVE_INFINITY],
      ['now', new Date()],
      ['publicKey', []],
      ['storage', {}],
      ['productId', ''],
    ] as const) {
      assert.throws(
        () => createLicenseGuard({ ...valid, [option]: value }),
        (error: unknown) => error instanceof InvalidOptionError && error.option === option,
        `${option}: ${String(value)}`,
      )
    }
    const broken = createLicenseGuard({ ...valid, now: () => new Date(Number.NaN) })
    await assert.rejects(broken.check(), (error: unknown) => error instanceof InvalidOptionError)
  })
})
