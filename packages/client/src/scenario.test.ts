/**
 * @module The live conformance scenario (conformance/scenario.md) with the JavaScript client, the
 * reference: the same steps the Python and Go SDKs' integration tests take, against a real
 * `keyturn serve` started by conformance/serve.mjs.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { KeyturnApiError, KeyturnSignatureError, LicenseFileError, LicenseTokenError } from './errors.js'
import { KeyturnClient } from './keyturn-client.js'
import { createActivationRequest, createDeactivationCode } from './offline-activation.js'
import { validateLicenseToken } from './validate-license-token.js'
import { verifyLicenseFile } from './verify-license-file.js'

interface Scenario {
  baseUrl: string
  adminKey: string
  clientKey: string
  productId: `prd_${string}`
  publicKeyPem: string
  licenses: Record<'main' | 'full', { id: string; key: string }>
  guessLimit: number
}

const conformance = new URL('../../../conformance/', import.meta.url)
const unknownKey = 'ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ'

async function rejectsWith(
  promise: Promise<unknown>,
  status: number,
  code: string,
): Promise<KeyturnApiError> {
  const error = await promise.then(
    () => assert.fail(`expected ${status} ${code}`),
    (caught: unknown) => caught,
  )
  assert.ok(error instanceof KeyturnApiError, String(error))
  assert.deepEqual([error.status, error.code], [status, code])
  return error
}

it('runs the live scenario against keyturn serve', async (t) => {
  const server = spawn(process.execPath, [fileURLToPath(new URL('serve.mjs', conformance))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  t.after(async () => {
    server.stdin.end() // stops the server and deletes its database
    if (server.exitCode === null) {
      await once(server, 'exit')
    }
  })
  const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string]
  const s = JSON.parse(line) as Scenario
  const { main, full } = s.licenses
  const productId = s.productId
  const client = new KeyturnClient({ baseUrl: s.baseUrl, apiKey: s.clientKey, publicKey: s.publicKeyPem })
  const fingerprint = createHmac('sha256', 'keyturn-js-scenario').update('scenario-machine').digest('hex')
  const onMachine = { key: main.key, productId, fingerprint }

  // Activate, validate (signed), heartbeat, usage.
  assert.equal((await client.validateLicense({ key: main.key, productId })).isValid, true)
  assert.equal(
    (await client.activateLicenseByKey({ ...onMachine, name: 'scenario' })).fingerprint,
    fingerprint,
  )
  const validation = await client.validateLicense(onMachine)
  assert.deepEqual([validation.isValid, validation.reason], [true, null])
  assert.equal((await client.heartbeatLicenseByKey(onMachine)).fingerprint, fingerprint)
  assert.equal((await client.incrementLicenseUsageByKey({ key: main.key, productId, increment: 2 })).uses, 2)

  // A token, checked offline on this machine and refused on another.
  const { token } = await client.createLicenseTokenByKey(onMachine)
  const result = await validateLicenseToken({ token, productId, publicKey: s.publicKeyPem, fingerprint })
  assert.deepEqual([result.licenseId, result.fingerprint], [main.id, fingerprint])
  await assert.rejects(
    validateLicenseToken({ token, productId, publicKey: s.publicKeyPem, fingerprint: 'another-machine' }),
    (error: unknown) => error instanceof LicenseTokenError && error.code === 'fingerprint_mismatch',
  )

  // A license file for this machine, encrypted: read offline here, unreadable on another machine.
  const made = await client.createLicenseFileByKey({ ...onMachine, encrypt: true })
  const checked = await verifyLicenseFile(made.licenseFile, {
    productId,
    publicKey: s.publicKeyPem,
    licenseKey: main.key,
    fingerprint,
  })
  assert.deepEqual([checked.licenseId, checked.fingerprint, checked.encrypted], [main.id, fingerprint, true])
  await assert.rejects(
    verifyLicenseFile(made.licenseFile, {
      productId,
      publicKey: s.publicKeyPem,
      licenseKey: main.key,
      fingerprint: 'another-machine',
    }),
    (error: unknown) => error instanceof LicenseFileError && error.code === 'decryption_failed',
  )

  // Deactivate: the machine is no longer activated.
  await client.deactivateLicenseByKey(onMachine)
  const after = await client.validateLicense(onMachine)
  assert.deepEqual([after.isValid, after.reason], [false, 'not_activated'])

  // An air-gapped machine: its request file (the key typed in lower case without dashes, a name
  // outside ASCII) turned into a license file by the vendor (an admin key), read on the machine,
  // and its seat given back with a deactivation code, a wrong code refused first.
  const vendor = new KeyturnClient({ baseUrl: s.baseUrl, apiKey: s.adminKey })
  const airGapped = createHmac('sha256', 'keyturn-js-scenario').update('air-gapped-machine').digest('hex')
  const name = 'Poste de Zoé ✓ <lab & co> \u2028'
  const request = await createActivationRequest({
    licenseKey: main.key.toLowerCase().replaceAll('-', ''),
    productId,
    fingerprint: airGapped,
    name,
    platform: 'linux-x64',
  })
  const offline = await vendor.activateOffline({ request })
  assert.deepEqual([offline.activation.fingerprint, offline.activation.name], [airGapped, name])
  const file = await verifyLicenseFile(offline.licenseFile, {
    productId,
    publicKey: s.publicKeyPem,
    licenseKey: main.key,
    fingerprint: airGapped,
  })
  assert.equal(file.activationId, offline.activation.id)
  assert.ok(file.activationId !== undefined && file.deactivationSecret !== undefined)
  const wrong = await createDeactivationCode({ activationId: file.activationId, secret: 'A'.repeat(43) })
  await rejectsWith(
    vendor.deactivateOffline(file.activationId, { code: wrong }),
    422,
    'deactivation_code_invalid',
  )
  const code = await createDeactivationCode({
    activationId: file.activationId,
    secret: file.deactivationSecret,
  })
  await vendor.deactivateOffline(file.activationId, { code })
  await rejectsWith(vendor.getActivation(file.activationId), 404, 'activation_not_found')

  // 409: every seat of the full license is taken.
  await rejectsWith(
    client.activateLicenseByKey({ ...onMachine, key: full.key }),
    409,
    'activation_limit_reached',
  )

  // A signed answer checked against a key that is not the product's.
  const vectors = JSON.parse(await readFile(new URL('vectors.json', conformance), 'utf8')) as {
    keys: { other: { publicKeyPem: string } }
  }
  const stranger = new KeyturnClient({
    baseUrl: s.baseUrl,
    apiKey: s.clientKey,
    publicKey: vectors.keys.other.publicKeyPem,
  })
  await assert.rejects(
    stranger.validateLicense({ key: main.key, productId }),
    (error: unknown) => error instanceof KeyturnSignatureError && error.code === 'unknown_key',
  )

  // 401: an unknown API key.
  const wrongKey = new KeyturnClient({ baseUrl: s.baseUrl, apiKey: 'kt_client_not-a-real-key-000000000000' })
  await rejectsWith(wrongKey.validateLicense({ key: main.key, productId }), 401, 'unauthenticated')

  // 404, then 429 with Retry-After once the address has guessed too many unknown keys (last: the
  // address stays blocked). The wait asked for is longer than the client ever waits: not retried.
  await rejectsWith(client.validateLicense({ key: unknownKey, productId }), 404, 'license_not_found')
  let refused: unknown
  for (let guess = 0; guess < s.guessLimit; guess++) {
    refused = await client.validateLicense({ key: unknownKey, productId }).catch((error: unknown) => error)
    if (refused instanceof KeyturnApiError && refused.status === 429) {
      break
    }
  }
  assert.ok(refused instanceof KeyturnApiError, String(refused))
  assert.deepEqual([refused.status, refused.code], [429, 'rate_limited'])
  assert.ok((refused.retryAfterMs ?? 0) > 20_000, `Retry-After ${refused.retryAfterMs}`)
})
