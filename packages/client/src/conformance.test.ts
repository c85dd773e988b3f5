/**
 * @module The JavaScript client against the language-neutral conformance vectors
 * (conformance/vectors.json): it is the reference every other SDK is held to, so each vector's
 * expected answer is what this client answers.
 */
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { describe, it } from 'node:test'
import { KeyturnSignatureError, LicenseFileError, LicenseTokenError } from './errors.js'
import { createLicenseGuard } from './guard/license-guard.js'
import { KeyturnClient } from './keyturn-client.js'
import { createDeactivationCode, encodeActivationRequest } from './offline-activation.js'
import { checkSignedAnswer } from './signed-answers.js'
import { validateLicenseToken } from './validate-license-token.js'
import { verifyLicenseFile } from './verify-license-file.js'
import { verifyWebhook, WebhookSignatureError } from './verify-webhook.js'

type Expect = { valid: true; result?: unknown; event?: unknown } | { valid: false; error: string }
type KeyName = 'product' | 'other'

interface Vectors {
  keys: Record<KeyName, { publicKeyPem: string }>
  tokens: {
    name: string
    token: string
    options: {
      productId: string
      publicKeys: KeyName[]
      now: string
      fingerprint?: string
      requireEntitlements?: string[]
    }
    expect: Expect
  }[]
  signedAnswers: {
    name: string
    answer: { status: number; method: string; path: string; headers: Record<string, string>; body: string }
    check: { publicKeys: KeyName[]; nonce: string; now: string; toleranceSeconds: number }
    expect: Expect
  }[]
  webhooks: {
    name: string
    secret: string
    payload: string
    headers: Record<string, string>
    now: string
    expect: Expect
  }[]
  fingerprints: { salt: string; machineId: string; fingerprint: string }[]
  activationRequests: {
    name: string
    licenseKey: string
    payload: {
      productId: string
      fingerprint: string
      name?: string
      platform?: string
      nonce: string
      created: string
    }
    keyHint: string
    request: string
  }[]
  deactivationCodes: { name: string; activationId: string; secret: string; now: string; code: string }[]
  licenseFiles: {
    name: string
    file: string
    options: {
      productId: string
      publicKeys: KeyName[]
      now: string
      licenseKey?: string
      fingerprint?: string
      requireEntitlements?: string[]
    }
    expect: Expect
  }[]
  guard: {
    name: string
    proof: string
    options: {
      productId: string
      publicKeys: KeyName[]
      licenseKey: string
      gracePeriod?: number
      now: string
    }
    expect: unknown
  }[]
}

const vectors = JSON.parse(
  readFileSync(new URL('../../../conformance/vectors.json', import.meta.url), 'utf8'),
) as Vectors
const pems = (names: KeyName[]) => names.map((name) => vectors.keys[name].publicKeyPem)

/** The vector's answer: `{ valid: true, … }` or `{ valid: false, error: code }`. */
async function answer(run: () => Promise<unknown>, field: 'result' | 'event' | undefined): Promise<Expect> {
  try {
    const value = await run()
    return field === undefined ? { valid: true } : { valid: true, [field]: value }
  } catch (error) {
    if (
      error instanceof LicenseTokenError ||
      error instanceof LicenseFileError ||
      error instanceof KeyturnSignatureError ||
      error instanceof WebhookSignatureError
    ) {
      return { valid: false, error: error.code }
    }
    throw error
  }
}

describe('conformance vectors: license tokens', () => {
  for (const vector of vectors.tokens) {
    it(vector.name, async () => {
      const { options } = vector
      const got = await answer(
        () =>
          validateLicenseToken({
            token: vector.token,
            productId: options.productId,
            publicKey: pems(options.publicKeys),
            now: new Date(options.now),
            ...(options.fingerprint === undefined ? {} : { fingerprint: options.fingerprint }),
            ...(options.requireEntitlements === undefined
              ? {}
              : { requireEntitlements: options.requireEntitlements }),
          }),
        'result',
      )
      assert.deepEqual(got, vector.expect)
    })
  }
})

describe('conformance vectors: signed answers', () => {
  for (const vector of vectors.signedAnswers) {
    it(vector.name, async () => {
      const { answer: signed, check } = vector
      const body = new TextEncoder().encode(signed.body)
      const got = await answer(
        () =>
          checkSignedAnswer(
            {
              status: signed.status,
              headers: new Headers(signed.headers),
              body,
              json: JSON.parse(signed.body),
              method: signed.method,
              path: signed.path,
            },
            {
              publicKey: pems(check.publicKeys),
              nonce: check.nonce,
              now: new Date(check.now),
              toleranceSeconds: check.toleranceSeconds,
            },
          ),
        undefined,
      )
      assert.deepEqual(got, vector.expect)
    })
  }
})

describe('conformance vectors: webhooks', () => {
  for (const vector of vectors.webhooks) {
    it(vector.name, async () => {
      const got = await answer(
        async () =>
          verifyWebhook({
            payload: vector.payload,
            headers: vector.headers,
            secret: vector.secret,
            now: new Date(vector.now),
          }),
        'event',
      )
      assert.deepEqual(got, vector.expect)
    })
  }
})

describe('conformance vectors: machine fingerprints', () => {
  it('are HMAC-SHA256 keyed by the salt over the machine id, in lowercase hex', () => {
    for (const { salt, machineId, fingerprint } of vectors.fingerprints) {
      assert.equal(createHmac('sha256', salt).update(machineId).digest('hex'), fingerprint)
    }
  })
})

describe('conformance vectors: license files', () => {
  for (const vector of vectors.licenseFiles) {
    it(vector.name, async () => {
      const { options } = vector
      const got = await answer(
        () =>
          verifyLicenseFile(vector.file, {
            productId: options.productId,
            publicKey: pems(options.publicKeys),
            now: new Date(options.now),
            ...(options.licenseKey === undefined ? {} : { licenseKey: options.licenseKey }),
            ...(options.fingerprint === undefined ? {} : { fingerprint: options.fingerprint }),
            ...(options.requireEntitlements === undefined
              ? {}
              : { requireEntitlements: options.requireEntitlements }),
          }),
        'result',
      )
      assert.deepEqual(got, vector.expect)
    })
  }
})

/** An address nothing listens on: a port that was free a moment ago. */
async function unreachableUrl(): Promise<string> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const address = probe.address()
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  assert.ok(address !== null && typeof address === 'object')
  return `http://127.0.0.1:${address.port}`
}

describe('conformance vectors: the license guard offline', () => {
  it('has vectors', () => assert.ok(vectors.guard.length > 0))
  for (const vector of vectors.guard) {
    it(vector.name, async () => {
      const { options } = vector
      const client = new KeyturnClient({
        baseUrl: await unreachableUrl(),
        apiKey: 'kt_client_conformance',
        maxRetries: 0,
      })
      const stored = new Map([
        [`keyturn-guard:${options.productId}`, JSON.stringify({ answer: vector.proof, fingerprint: null })],
      ])
      const guard = createLicenseGuard({
        client,
        productId: options.productId,
        publicKey: pems(options.publicKeys),
        licenseKey: options.licenseKey,
        storage: {
          get: (key) => stored.get(key) ?? null,
          set: (key, value) => void stored.set(key, value),
          delete: (key) => void stored.delete(key),
        },
        now: () => new Date(options.now),
        ...(options.gracePeriod === undefined ? {} : { gracePeriod: options.gracePeriod }),
      })
      const result = await guard.check()
      assert.deepEqual(
        {
          ...result,
          entitlements: [...result.entitlements],
          validUntil: result.validUntil?.toISOString() ?? null,
        },
        vector.expect,
      )
    })
  }
})

describe('conformance vectors: activation requests and deactivation codes', () => {
  for (const vector of vectors.activationRequests) {
    it(`request ${vector.name}`, async () => {
      assert.equal(await encodeActivationRequest(vector.licenseKey, vector.payload), vector.request)
    })
  }
  for (const vector of vectors.deactivationCodes) {
    it(`code ${vector.name}`, async () => {
      const { activationId, secret } = vector
      assert.equal(
        await createDeactivationCode({ activationId, secret, now: new Date(vector.now) }),
        vector.code,
      )
    })
  }
})
