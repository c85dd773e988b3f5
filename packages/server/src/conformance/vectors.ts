/**
 * @module The conformance vectors every Keyturn client (JavaScript, Python, Go, …) must answer the
 * same way: license tokens, signed answers, webhooks, machine fingerprints, license files and the
 * license guard's offline decisions, each with the time to judge it at and the answer expected
 * (valid with its fields, or the error code; the guard's result). They are made here
 * the way the server makes the real thing (`signJwt` for tokens, the protocol's signature base for
 * answers, Standard Webhooks for deliveries), from test-only keys derived from fixed labels, fixed
 * ids and fixed times, so the output is the same on every run. `npm run conformance` writes them to
 * `conformance/vectors.json`; vectors.test.ts fails when that file is stale. docs/sdks.md explains
 * the format.
 */
import { createHash, createHmac, createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto'
import {
  answerSignatureBase,
  answerSignatureParams,
  canonicalLicenseKey,
  EventResourceSchema,
  licenseTokenIssuer,
  licenseTokenType,
  signatureLabel,
} from '@keyturn/protocol'
import { Webhook } from 'standardwebhooks'
import { writeLicenseFile } from '../license-files/license-file-format.js'
import {
  deactivationCodeMac,
  formatDeactivationCode,
  licenseKeyHint,
  writeActivationRequest,
} from '../offline/offline-formats.js'
import { signJwt } from '../tokens/ed25519.js'

/** A test-only Ed25519 key: its seed is the SHA-256 of a public label, so anyone can re-derive it. */
export interface ConformanceKey {
  readonly label: string
  readonly privateKey: KeyObject
  readonly publicKeyPem: string
  /** RFC 7638 thumbprint of the public JWK, as the server's `keyId`. */
  readonly keyId: string
}

const pkcs8Ed25519Prefix = Buffer.from('302e020100300506032b657004220420', 'hex')

export function conformanceKey(label: string): ConformanceKey {
  const seed = createHash('sha256').update(label).digest()
  const privateKey = createPrivateKey({
    key: Buffer.concat([pkcs8Ed25519Prefix, seed]),
    format: 'der',
    type: 'pkcs8',
  })
  const publicKey = createPublicKey(privateKey)
  const { crv, kty, x } = publicKey.export({ format: 'jwk' })
  const keyId = createHash('sha256').update(JSON.stringify({ crv, kty, x })).digest('base64url')
  return {
    label,
    privateKey,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    keyId,
  }
}

const productKey = conformanceKey('keyturn conformance: product signing key (test only)')
const otherKey = conformanceKey('keyturn conformance: another product signing key (test only)')
const webhookSecret = `whsec_${createHash('sha256').update('keyturn conformance: webhook secret (test only)').digest('base64')}`
const otherWebhookSecret = `whsec_${createHash('sha256').update('keyturn conformance: another webhook secret (test only)').digest('base64')}`

const productId = 'prd_3kTMd9qA8xYb2VnLr5sPwZ'
const otherProductId = 'prd_9ZqLm2Xc7VbN4KtRw8YpHd'
const licenseId = 'lic_7fQx2mNc4RtYp9LkWv3bHs'
const fingerprint = '0c8e6bd3b62fa6d8e3f9b1a0c2d4e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8'
const issued = '2030-01-01T00:00:00.000Z'
const expires = '2030-01-31T00:00:00.000Z'
const during = '2030-01-15T00:00:00.000Z'
const seconds = (iso: string) => Date.parse(iso) / 1000

type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json }
type Claims = Record<string, Json | undefined>

/** The claims as the token service writes them: the license's, then the registered ones in jose's order. */
function claims(overrides: Claims = {}): Claims {
  return {
    licenseId,
    expirationDate: expires,
    productId,
    createdAt: issued,
    // Slots kept in the server's order, left out when undefined.
    customFields: undefined,
    fingerprint: undefined,
    entitlements: [],
    checkInBy: undefined,
    gracePeriod: undefined,
    iss: licenseTokenIssuer,
    sub: licenseId,
    aud: productId,
    iat: seconds(issued),
    nbf: seconds(issued),
    exp: seconds(expires),
    jti: 'tok_2hVq8RmX4cLp7NwZ3bKt9Y',
    ...overrides,
  }
}

const withoutUndefined = (object: Claims): Claims =>
  Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined))

const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

async function token(
  options: { claims?: Claims; header?: Claims; key?: ConformanceKey } = {},
): Promise<string> {
  const key = options.key ?? productKey
  const header = withoutUndefined({ alg: 'EdDSA', typ: licenseTokenType, kid: key.keyId, ...options.header })
  return signJwt(header, withoutUndefined(claims(options.claims)), (data) =>
    Promise.resolve(sign(null, data, key.privateKey)),
  )
}

/** The offline result the JavaScript client's `validateLicenseToken` returns for `claims(overrides)`. */
function result(overrides: Claims = {}): Record<string, Json> {
  const all = claims(overrides)
  return {
    licenseId: all.licenseId as string,
    expiresAt: all.expirationDate as string,
    productId: all.productId as string,
    customFields: (all.customFields ?? {}) as Json,
    issuedAt: all.createdAt as string,
    ...(all.fingerprint === undefined ? {} : { fingerprint: all.fingerprint }),
    entitlements: (all.entitlements ?? []) as Json,
    ...(all.checkInBy === undefined ? {} : { checkInBy: all.checkInBy }),
    ...(all.gracePeriod === undefined ? {} : { gracePeriod: all.gracePeriod }),
  }
}

/** What a license under a check-in policy carries: its next check-in deadline and the policy's grace. */
const checkIn = { checkInBy: '2030-01-08T00:00:00.000Z', gracePeriod: 259_200 }

type KeyName = 'product' | 'other'

interface TokenVector {
  readonly name: string
  readonly description: string
  readonly token: string
  readonly options: {
    readonly productId: string
    readonly publicKeys: readonly KeyName[]
    readonly now: string
    readonly fingerprint?: string
    readonly requireEntitlements?: readonly string[]
  }
  readonly expect:
    | { readonly valid: true; readonly result: Json }
    | { readonly valid: false; readonly error: string }
}

async function tokenVectors(): Promise<TokenVector[]> {
  const options = { productId, publicKeys: ['product'] as KeyName[], now: during }
  const valid = (name: string, description: string, tokenText: string, fields: Claims, extra = {}) => ({
    name,
    description,
    token: tokenText,
    options: { ...options, ...extra },
    expect: { valid: true as const, result: result(fields) },
  })
  const invalid = (name: string, description: string, tokenText: string, error: string, extra = {}) => ({
    name,
    description,
    token: tokenText,
    options: { ...options, ...extra },
    expect: { valid: false as const, error },
  })
  const bound = { fingerprint }
  const rich = {
    customFields: { plan: 'pro', seats: 5, note: 'é ✓ "quoted"', limits: { projects: 10 } },
    entitlements: ['export', 'sso'],
  }
  const basic = await token()
  const [basicHeader = '', basicPayload = '', basicSignature = ''] = basic.split('.')
  const hsInput = `${base64urlJson({ alg: 'HS256', typ: licenseTokenType, kid: productKey.keyId })}.${base64urlJson(claims())}`
  const hsMac = createHmac('sha256', productKey.publicKeyPem).update(hsInput).digest('base64url')
  // The last base64url character of a 64-byte signature carries 4 unused bits: setting one of them
  // spells the same bytes another way, which a client must refuse.
  const lastIndex = basicSignature.length - 1
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const loose = alphabet.charAt(alphabet.indexOf(basicSignature.charAt(lastIndex)) | 1)
  return [
    valid('valid', 'A token with no fingerprint, custom fields or entitlements.', basic, {}),
    valid(
      'valid-fingerprint',
      'A token bound to a machine, checked on that machine.',
      await token({ claims: bound }),
      bound,
      { fingerprint },
    ),
    valid(
      'valid-fingerprint-not-checked',
      'A bound token checked without a fingerprint: valid, and the result names the machine.',
      await token({ claims: bound }),
      bound,
    ),
    valid(
      'valid-custom-fields-entitlements',
      'Custom fields (any JSON, UTF-8) and entitlements are returned as signed; a required entitlement present.',
      await token({ claims: rich }),
      rich,
      { requireEntitlements: ['sso'] },
    ),
    valid(
      'valid-after-rotation',
      'Several configured keys (a retired one first): the one named by the token verifies it.',
      basic,
      {},
      { publicKeys: ['other', 'product'] },
    ),
    valid('valid-at-not-before', 'Judged at exactly `nbf`: valid.', basic, {}, { now: issued }),
    valid(
      'valid-check-in',
      'A license under a check-in policy: its deadline and grace are returned as signed.',
      await token({ claims: checkIn }),
      checkIn,
    ),
    valid(
      'valid-without-entitlements-claim',
      'A token from before entitlements existed: the result has an empty list.',
      await token({ claims: { entitlements: undefined } }),
      {},
    ),
    invalid('expired', 'Judged after `exp`.', basic, 'expired', { now: '2030-02-01T00:00:00.000Z' }),
    invalid('expired-at-exp', 'Judged at exactly `exp`: expired.', basic, 'expired', { now: expires }),
    invalid('not-yet-valid', 'Judged before `nbf`.', basic, 'not_yet_valid', {
      now: '2029-12-31T23:59:59.000Z',
    }),
    invalid('wrong-product', 'Checked for another product (its `aud`).', basic, 'product_mismatch', {
      productId: otherProductId,
    }),
    invalid(
      'wrong-machine',
      'Bound to another machine.',
      await token({ claims: bound }),
      'fingerprint_mismatch',
      { fingerprint: 'a-different-machine' },
    ),
    invalid(
      'unbound-token-on-checked-machine',
      'Not bound to any machine, checked with a fingerprint.',
      basic,
      'fingerprint_mismatch',
      { fingerprint },
    ),
    invalid(
      'entitlements-missing',
      'A required entitlement the license lacks.',
      await token({ claims: rich }),
      'entitlements_missing',
      { requireEntitlements: ['sso', 'audit-log'] },
    ),
    invalid(
      'wrong-key',
      "Signed by another key under the product key's id.",
      await token({ key: otherKey, header: { kid: productKey.keyId } }),
      'invalid_signature',
    ),
    invalid(
      'bad-kid',
      'Signed by a key that is not configured (its own id).',
      await token({ key: otherKey }),
      'invalid_signature',
    ),
    invalid(
      'missing-kid',
      'No key id in the header.',
      await token({ header: { kid: undefined } }),
      'invalid_signature',
    ),
    invalid(
      'alg-none',
      'An unsigned token (`alg: none`).',
      `${base64urlJson({ alg: 'none', typ: licenseTokenType, kid: productKey.keyId })}.${base64urlJson(claims())}.`,
      'unsupported_algorithm',
    ),
    invalid(
      'hs256-public-key-as-secret',
      'HS256 with the public key PEM as the HMAC secret (algorithm confusion).',
      `${hsInput}.${hsMac}`,
      'unsupported_algorithm',
    ),
    invalid(
      'crit-header',
      'A header requiring an extension (`crit`) no client implements.',
      await token({ header: { crit: ['exp-policy'], 'exp-policy': 1 } }),
      'unsupported_algorithm',
    ),
    invalid(
      'altered-payload',
      'The payload changed after signing (another plan).',
      `${basicHeader}.${base64urlJson(claims({ customFields: { plan: 'enterprise' } }))}.${basicSignature}`,
      'invalid_signature',
    ),
    invalid(
      'altered-header',
      'The header changed after signing.',
      `${base64urlJson({ alg: 'EdDSA', typ: licenseTokenType, kid: productKey.keyId, extra: 1 })}.${basicPayload}.${basicSignature}`,
      'invalid_signature',
    ),
    invalid(
      'wrong-type',
      'A JWT of another type (`typ: JWT`).',
      await token({ header: { typ: 'JWT' } }),
      'malformed',
    ),
    invalid(
      'wrong-issuer',
      'Signed by the product key but not issued by Keyturn.',
      await token({ claims: { iss: 'someone-else' } }),
      'malformed',
    ),
    invalid(
      'check-in-not-a-time',
      'A `checkInBy` that is not a date-time.',
      await token({ claims: { ...checkIn, checkInBy: 'next week' } }),
      'malformed',
    ),
    invalid(
      'subject-not-license',
      'The subject is another license than `licenseId`.',
      await token({ claims: { sub: 'lic_0000000000000000000000' } }),
      'malformed',
    ),
    invalid(
      'product-claim-mismatch',
      'The audience is the product but the `productId` claim is another.',
      await token({ claims: { productId: otherProductId } }),
      'malformed',
    ),
    invalid(
      'missing-jti',
      'A required registered claim is missing.',
      await token({ claims: { jti: undefined } }),
      'malformed',
    ),
    invalid(
      'bad-timestamp',
      'A timestamp claim that is not an RFC 3339 date-time.',
      await token({ claims: { expirationDate: '31/01/2030' } }),
      'malformed',
    ),
    invalid(
      'non-canonical-signature',
      'The signature spelled with a non-zero unused bit.',
      `${basic.slice(0, basic.length - 1)}${loose}`,
      'malformed',
    ),
    invalid('two-parts', 'Not three dot-separated parts.', `${basicHeader}.${basicPayload}`, 'malformed'),
    invalid('empty', 'An empty string.', '', 'malformed'),
    invalid(
      'too-long',
      'Longer than 16,384 characters.',
      `${basic}${'A'.repeat(16_385 - basic.length)}`,
      'malformed',
    ),
  ]
}

interface SignedAnswerVector {
  readonly name: string
  readonly description: string
  readonly answer: {
    readonly status: number
    readonly method: string
    readonly path: string
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
  }
  readonly check: {
    readonly publicKeys: readonly KeyName[]
    readonly nonce: string
    readonly now: string
    readonly toleranceSeconds: number
  }
  readonly expect: { readonly valid: true } | { readonly valid: false; readonly error: string }
}

const answerNonce = '6f1c0e9a4b2d8e7f3a5c9b1d0e2f4a6c'
const answerAt = '2030-01-15T12:00:00.000Z'

/** An answer as the server signs it (protection/routes/application-facing.ts). */
function signedAnswer(options: {
  readonly body?: string
  readonly key?: ConformanceKey
  readonly keyId?: string
  readonly status?: number
}): SignedAnswerVector['answer'] {
  const body =
    options.body ??
    JSON.stringify({
      isValid: true,
      reason: null,
      timestamp: answerAt,
      license: { id: licenseId, productId, status: 'active' },
      nonce: answerNonce,
    })
  const key = options.key ?? productKey
  const status = options.status ?? 200
  const contentDigest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
  const created = seconds(answerAt)
  const date = new Date(created * 1000).toUTCString()
  const signatureParams = answerSignatureParams(created, options.keyId ?? key.keyId)
  const path = '/api/v0/licenses/validate'
  const base = answerSignatureBase({ status, contentDigest, date, method: 'POST', path, signatureParams })
  const signature = sign(null, Buffer.from(base), key.privateKey).toString('base64')
  return {
    status,
    method: 'POST',
    path,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-digest': contentDigest,
      date,
      'signature-input': `${signatureLabel}=${signatureParams}`,
      signature: `${signatureLabel}=:${signature}:`,
    },
    body,
  }
}

function signedAnswerVectors(): SignedAnswerVector[] {
  const check = {
    publicKeys: ['product'] as KeyName[],
    nonce: answerNonce,
    now: answerAt,
    toleranceSeconds: 300,
  }
  const valid = signedAnswer({})
  const vector = (
    name: string,
    description: string,
    answer: SignedAnswerVector['answer'],
    error?: string,
    extra: Partial<SignedAnswerVector['check']> = {},
  ): SignedAnswerVector => ({
    name,
    description,
    answer,
    check: { ...check, ...extra },
    expect: error === undefined ? { valid: true } : { valid: false, error },
  })
  const { signature: _signature, ...unsignedHeaders } = valid.headers
  return [
    vector('valid', 'Signed by the product key for this request.', valid),
    vector('valid-clock-within-tolerance', 'Checked 299 s after it was signed.', valid, undefined, {
      now: '2030-01-15T12:04:59.000Z',
    }),
    vector('valid-after-rotation', 'Several configured keys: the one named verifies it.', valid, undefined, {
      publicKeys: ['other', 'product'],
    }),
    vector(
      'altered-body',
      'The body changed in transit (the signed digest no longer matches).',
      { ...valid, body: valid.body.replace('"isValid":true', '"isValid":false') },
      'digest_mismatch',
    ),
    vector('wrong-nonce', 'A genuine answer replayed for another request.', valid, 'nonce_mismatch', {
      nonce: '00000000000000000000000000000000',
    }),
    vector('stale', 'Checked 301 s after it was signed.', valid, 'stale', {
      now: '2030-01-15T12:05:01.000Z',
    }),
    vector('from-the-future', 'Checked 301 s before it was signed.', valid, 'stale', {
      now: '2030-01-15T11:54:59.000Z',
    }),
    vector(
      'wrong-key',
      "Signed by another key under the product key's id.",
      signedAnswer({ key: otherKey, keyId: productKey.keyId }),
      'invalid_signature',
    ),
    vector(
      'unknown-key',
      'Signed by a key that is not configured (its own id).',
      signedAnswer({ key: otherKey }),
      'unknown_key',
    ),
    vector(
      'altered-status',
      'The status changed in transit.',
      { ...valid, status: 201 },
      'invalid_signature',
    ),
    vector(
      'altered-path',
      'An answer to another route.',
      { ...valid, path: '/api/v0/licenses/activate' },
      'invalid_signature',
    ),
    vector('unsigned', 'No `Signature` header.', { ...valid, headers: unsignedHeaders }, 'unsigned'),
    vector(
      'malformed-signature-input',
      'Covered components other than those Keyturn signs.',
      {
        ...valid,
        headers: {
          ...valid.headers,
          'signature-input': (valid.headers['signature-input'] ?? '').replace(' "date"', ''),
        },
      },
      'malformed',
    ),
  ]
}

interface WebhookVector {
  readonly name: string
  readonly description: string
  readonly secret: string
  readonly payload: string
  readonly headers: Readonly<Record<string, string>>
  readonly now: string
  readonly expect:
    | { readonly valid: true; readonly event: Json }
    | { readonly valid: false; readonly error: string }
}

const deliveredAt = '2030-01-15T12:00:00.000Z'

function webhookVectors(): WebhookVector[] {
  const event = ((EventResourceSchema as { examples?: Json[] }).examples ?? [])[0] as Json
  const payload = JSON.stringify(event)
  const id = 'msg_2Xh7Lq9Vc4TbN8mKp3Wz6R'
  const timestamp = String(seconds(deliveredAt))
  const signature = new Webhook(webhookSecret).sign(id, new Date(deliveredAt), payload)
  const headers = { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature }
  const vector = (
    name: string,
    description: string,
    changes: Partial<Pick<WebhookVector, 'payload' | 'headers' | 'now' | 'secret'>>,
    error?: string,
  ): WebhookVector => ({
    name,
    description,
    secret: webhookSecret,
    payload,
    headers,
    now: deliveredAt,
    ...changes,
    expect: error === undefined ? { valid: true, event } : { valid: false, error },
  })
  const notAnEvent = JSON.stringify({ hello: 'world' })
  // A server newer than the client: an event type and a kind of actor the client does not list.
  const newerEvent = {
    ...(event as Record<string, Json>),
    type: 'subscription.paused',
    actor: { type: 'robot', id: 'rbt_7Lq2Vx9Nc4Tb' },
    data: { id: 'sub_3Kp8Wz6R', object: 'Subscription' },
  }
  const newer = JSON.stringify(newerEvent)
  const otherSignature = new Webhook(otherWebhookSecret).sign(id, new Date(deliveredAt), payload)
  return [
    vector('valid', 'A delivery signed with the endpoint secret.', {}),
    vector(
      'valid-several-signatures',
      'One of several space-separated signatures matches (secret rotation).',
      {
        headers: { ...headers, 'webhook-signature': `${otherSignature} ${signature}` },
      },
    ),
    vector('valid-within-tolerance', 'Checked 300 s after it was sent.', { now: '2030-01-15T12:05:00.000Z' }),
    {
      ...vector(
        'valid-newer-event-type',
        'An event type and a kind of actor this client does not know: accepted (only the envelope is checked).',
        {
          payload: newer,
          headers: {
            ...headers,
            'webhook-signature': new Webhook(webhookSecret).sign(id, new Date(deliveredAt), newer),
          },
        },
      ),
      expect: { valid: true, event: newerEvent },
    },
    vector(
      'bad-signature',
      'Signed with another secret.',
      { headers: { ...headers, 'webhook-signature': otherSignature } },
      'invalid_signature',
    ),
    vector(
      'altered-payload',
      'The body changed in transit.',
      { payload: payload.replace('"license.created"', '"license.revoked"') },
      'invalid_signature',
    ),
    vector(
      'altered-id',
      'Another message id than the one signed.',
      { headers: { ...headers, 'webhook-id': 'msg_other' } },
      'invalid_signature',
    ),
    vector('stale', 'Checked 301 s after it was sent.', { now: '2030-01-15T12:05:01.000Z' }, 'stale'),
    vector(
      'from-the-future',
      'Checked 301 s before it was sent.',
      { now: '2030-01-15T11:54:59.000Z' },
      'stale',
    ),
    vector(
      'missing-headers',
      'No `webhook-signature` header.',
      { headers: { 'webhook-id': id, 'webhook-timestamp': timestamp } },
      'malformed',
    ),
    vector(
      'bad-timestamp',
      'A `webhook-timestamp` that is not a number.',
      { headers: { ...headers, 'webhook-timestamp': 'yesterday' } },
      'malformed',
    ),
    vector(
      'not-an-event',
      'Correctly signed, but the payload is not a Keyturn event.',
      {
        payload: notAnEvent,
        headers: {
          ...headers,
          'webhook-signature': new Webhook(webhookSecret).sign(id, new Date(deliveredAt), notAnEvent),
        },
      },
      'not_an_event',
    ),
  ]
}

interface LicenseFileVector {
  readonly name: string
  readonly description: string
  readonly file: string
  readonly options: {
    readonly productId: string
    readonly publicKeys: readonly KeyName[]
    readonly now: string
    readonly licenseKey?: string
    readonly fingerprint?: string
    readonly requireEntitlements?: readonly string[]
  }
  readonly expect:
    | { readonly valid: true; readonly result: Json }
    | { readonly valid: false; readonly error: string }
}

/** License files (docs/guides/offline.md), with fixed salts and nonces so the output is stable. */
async function licenseFileVectors(): Promise<LicenseFileVector[]> {
  const licenseKey = '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A'
  const customKey = 'acme-2030-gold'
  const license = {
    id: licenseId,
    status: 'active',
    expirationDate: '2031-01-01T00:00:00.000Z',
    policy: 'Pro',
    entitlements: ['export', 'sync'],
    maxActivations: 3,
    maxUses: null,
    uses: 0,
  }
  const machine = { activationId: 'act_2bQx9mNc4RtYp9LkWv3bHs', fingerprint }
  let counter = 0
  const random = (size: number) =>
    createHash('sha256')
      .update(`keyturn conformance: license-file randomness ${counter++}`)
      .digest()
      .subarray(0, size)
  const file = (
    options: {
      key?: ConformanceKey
      product?: string
      withMachine?: boolean
      encrypt?: boolean
      keyText?: string
      expiry?: string | null
      checkIn?: boolean
      /** A machine file from offline activation: it carries the machine's deactivation secret. */
      secret?: string
    } = {},
  ) => {
    const key = options.key ?? productKey
    return writeLicenseFile(
      {
        keyId: key.keyId,
        productId: options.product ?? productId,
        issued: new Date(issued),
        expiry: options.expiry === null ? null : new Date(options.expiry ?? expires),
        payload: {
          license,
          ...(options.withMachine === true
            ? { machine: options.secret === undefined ? machine : { ...machine, secret: options.secret } }
            : {}),
          ...(options.checkIn === true ? checkIn : {}),
        },
        licenseKey: options.keyText ?? licenseKey,
        ...(options.encrypt === true ? { encrypt: options.withMachine === true ? { fingerprint } : {} } : {}),
        random,
      },
      (data) => Promise.resolve(sign(null, data, key.privateKey)),
    )
  }
  const base = { productId, publicKeys: ['product'] as KeyName[], now: during }
  const resultOf = (extra: Record<string, Json> = {}, expiresAt: string | null = expires): Json => ({
    licenseId,
    productId,
    expiresAt,
    issuedAt: issued,
    customFields: {},
    ...extra,
    entitlements: license.entitlements,
    license,
    keyId: productKey.keyId,
    encrypted: false,
  })
  const vector = (
    name: string,
    description: string,
    text: string,
    expect: LicenseFileVector['expect'],
    options = {},
  ): LicenseFileVector => ({ name, description, file: text, options: { ...base, ...options }, expect })
  const valid = (name: string, description: string, text: string, result: Json, options = {}) =>
    vector(name, description, text, { valid: true, result }, options)
  const invalid = (name: string, description: string, text: string, error: string, options = {}) =>
    vector(name, description, text, { valid: false, error }, options)
  const clear = await file()
  const clearMachine = await file({ withMachine: true })
  const encrypted = await file({ encrypt: true })
  const encryptedMachine = await file({ withMachine: true, encrypt: true })
  const custom = await file({ encrypt: true, keyText: customKey })
  const [head = '', payload = '', signature = ''] = clear.split('\n').slice(1, -2).join('').split('.')
  const changed = `${payload.slice(0, 20)}${payload[20] === 'A' ? 'B' : 'A'}${payload.slice(21)}`
  const tampered = `-----BEGIN KEYTURN LICENSE FILE-----\n${`${head}.${changed}.${signature}`.match(/.{1,64}/g)?.join('\n')}\n-----END KEYTURN LICENSE FILE-----\n`
  const machineFields = { fingerprint, activationId: machine.activationId }
  const offlineSecret = deactivationSecretOf('keyturn conformance: deactivation secret')
  return [
    valid('valid-clear', 'A clear license file.', clear, resultOf()),
    valid(
      'valid-no-expiry',
      'A file that never expires (expiry null).',
      await file({ expiry: null }),
      resultOf({}, null),
    ),
    valid(
      'valid-machine',
      'A clear machine file, checked against its fingerprint.',
      clearMachine,
      resultOf(machineFields),
      { fingerprint },
    ),
    valid(
      'valid-encrypted-hkdf',
      'Encrypted with HKDF from a Keyturn key, given in lower case without dashes.',
      encrypted,
      { ...(resultOf() as Record<string, Json>), encrypted: true },
      { licenseKey: '7k3qdm9xtb2vhcr8pnwf4zj6a' },
    ),
    valid(
      'valid-encrypted-machine',
      'Encrypted for the license key and the machine.',
      encryptedMachine,
      { ...(resultOf(machineFields) as Record<string, Json>), encrypted: true },
      { licenseKey, fingerprint },
    ),
    valid(
      'valid-check-in',
      'A machine file of a license under a check-in policy: its deadline and grace are returned.',
      await file({ withMachine: true, checkIn: true }),
      { ...(resultOf(machineFields) as Record<string, Json>), ...checkIn },
      { fingerprint },
    ),
    valid(
      'valid-encrypted-pbkdf2',
      'Encrypted with PBKDF2 from a custom key, used exactly as given.',
      custom,
      { ...(resultOf() as Record<string, Json>), encrypted: true },
      { licenseKey: customKey },
    ),
    invalid('tampered', 'One character of the payload changed.', tampered, 'invalid_signature'),
    invalid('wrong-product', 'Checked for another product.', clear, 'product_mismatch', {
      productId: otherProductId,
    }),
    invalid('unknown-key', 'Only another key is configured.', clear, 'unknown_key', {
      publicKeys: ['other'],
    }),
    invalid(
      'forged-kid',
      'Signed by another key under the product key id.',
      await file({ key: { ...otherKey, keyId: productKey.keyId } }),
      'invalid_signature',
    ),
    invalid('expired', 'Checked at its expiry.', clear, 'expired', { now: expires }),
    invalid('not-yet-valid', 'Checked before it was issued.', clear, 'not_yet_valid', {
      now: '2029-12-31T23:59:59.000Z',
    }),
    invalid(
      'wrong-machine',
      'A clear machine file checked on another machine.',
      clearMachine,
      'fingerprint_mismatch',
      { fingerprint: 'another-machine' },
    ),
    invalid(
      'wrong-machine-encrypted',
      'An encrypted machine file read on another machine.',
      encryptedMachine,
      'decryption_failed',
      { licenseKey, fingerprint: 'another-machine' },
    ),
    invalid('wrong-license-key', 'An encrypted file read with another key.', encrypted, 'decryption_failed', {
      licenseKey: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6B',
    }),
    invalid('custom-key-case', 'A custom key is never canonicalised.', custom, 'decryption_failed', {
      licenseKey: customKey.toUpperCase(),
    }),
    invalid(
      'missing-entitlement',
      'The license lacks a required entitlement.',
      clear,
      'entitlements_missing',
      { requireEntitlements: ['admin'] },
    ),
    invalid(
      'malformed',
      'Not armoured as a license file.',
      clear.replace('KEYTURN LICENSE FILE', 'LICENSE'),
      'malformed',
    ),
    valid(
      'valid-offline-activation',
      'A machine file from offline activation: encrypted for the key and the machine, carrying the deactivation secret that keys its deactivation codes.',
      await file({ withMachine: true, encrypt: true, secret: offlineSecret }),
      {
        ...(resultOf({ ...machineFields, deactivationSecret: offlineSecret }) as Record<string, Json>),
        encrypted: true,
      },
      { licenseKey: '7k3qd m9xtb 2vhcr 8pnwf 4zj6a', fingerprint },
    ),
  ]
}

interface GuardVector {
  readonly name: string
  readonly description: string
  /** The kept signed validation answer, as the JavaScript client's `serializeSignedAnswer` writes it. */
  readonly proof: string
  readonly options: {
    readonly productId: string
    readonly publicKeys: readonly KeyName[]
    readonly licenseKey: string
    /** The guard's own grace period in seconds; absent: the default (three days). */
    readonly gracePeriod?: number
    readonly now: string
  }
  readonly expect: {
    readonly state: 'valid' | 'grace' | 'invalid'
    readonly reason: string
    readonly license: {
      readonly id: string
      readonly status: string
      readonly expiresAt: string | null
    } | null
    readonly entitlements: readonly string[]
    readonly validUntil: string | null
  }
}

/**
 * The license guard deciding offline (the server unreachable) from a kept signed validation answer:
 * each vector gives the answer, the guard's options and `now`, and the result expected.
 */
function guardVectors(): GuardVector[] {
  const licenseKey = '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A'
  const hour = 3_600_000
  const day = 24 * hour
  const at = (ms: number) => new Date(Date.parse(answerAt) + ms).toISOString()
  const answer = (
    fields: { isValid?: boolean; reason?: string; status?: string; expirationDate?: string } & Record<
      string,
      Json
    > = {},
  ) => {
    const { isValid = true, reason = null, status = 'active', expirationDate = null, ...rest } = fields
    return {
      isValid,
      reason,
      timestamp: answerAt,
      license: {
        id: licenseId,
        object: 'License',
        key: licenseKey,
        productId,
        status,
        expirationDate,
        entitlements: ['export'],
      },
      ...rest,
      nonce: answerNonce,
    }
  }
  const kept = (body: unknown, alter?: (text: string) => string) => {
    const text = JSON.stringify(body)
    const signed = signedAnswer({ body: text })
    return JSON.stringify({
      status: signed.status,
      method: signed.method,
      path: signed.path,
      nonce: answerNonce,
      headers: Object.fromEntries(
        ['signature-input', 'signature', 'content-digest', 'date'].map((name) => [
          name,
          signed.headers[name] ?? '',
        ]),
      ),
      body: alter === undefined ? text : alter(text),
    })
  }
  const license = (status = 'active', expiresAt: string | null = null) => ({
    id: licenseId,
    status,
    expiresAt,
  })
  const options = { productId, publicKeys: ['product'] as KeyName[], licenseKey }
  const vector = (
    name: string,
    description: string,
    proof: string,
    now: string,
    expect: GuardVector['expect'],
    extra: Partial<GuardVector['options']> = {},
  ): GuardVector => ({ name, description, proof, options: { ...options, ...extra, now }, expect })
  const valid = (
    state: 'valid' | 'grace',
    reason: string,
    validUntil: string,
    expiresAt: string | null = null,
  ) => ({
    state,
    reason,
    license: license('active', expiresAt),
    entitlements: ['export'],
    validUntil,
  })
  const invalid = (reason: string, withLicense: GuardVector['expect']['license']) => ({
    state: 'invalid' as const,
    reason,
    license: withLicense,
    entitlements: [],
    validUntil: null,
  })
  const plain = kept(answer())
  const checkIn = { checkInBy: at(7 * day), gracePeriod: 172_800 }
  const withCheckIn = kept(answer(checkIn))
  const withoutGrace = kept(answer({ checkInBy: at(7 * day) }))
  const ending = at(12 * hour)
  return [
    vector(
      'no-check-in-grace',
      'No check-in required: the deadline is the answer’s own signed time, so offline is grace (the default three days).',
      plain,
      at(hour),
      valid('grace', 'check_in_overdue', at(3 * day)),
    ),
    vector(
      'no-check-in-grace-expired',
      'Past the answer’s time plus the default three days.',
      plain,
      at(3 * day + 1000),
      invalid('grace_expired', license()),
    ),
    vector(
      'no-check-in-own-grace',
      'The guard’s own grace period (an hour), the answer carrying none.',
      plain,
      at(30 * 60_000),
      valid('grace', 'check_in_overdue', at(hour)),
      { gracePeriod: 3600 },
    ),
    vector(
      'check-in-valid',
      'Before `checkInBy`: valid offline until then.',
      withCheckIn,
      at(5 * day),
      valid('valid', 'offline', at(7 * day)),
    ),
    vector(
      'check-in-policy-grace',
      'Past `checkInBy`: the policy’s grace (two days) wins over the guard’s option (an hour).',
      withCheckIn,
      at(8 * day),
      valid('grace', 'check_in_overdue', at(9 * day)),
      { gracePeriod: 3600 },
    ),
    vector(
      'check-in-option-grace',
      'Past `checkInBy`, the answer carrying no grace period: the guard’s option (an hour).',
      withoutGrace,
      at(7 * day + 30 * 60_000),
      valid('grace', 'check_in_overdue', at(7 * day + hour)),
      { gracePeriod: 3600 },
    ),
    vector(
      'check-in-grace-expired',
      'Past `checkInBy` plus the policy’s grace.',
      withCheckIn,
      at(9 * day),
      invalid('grace_expired', license()),
    ),
    vector(
      'capped-by-license-expiry',
      'Valid offline, but never past the license’s own expiry.',
      kept(answer({ ...checkIn, expirationDate: ending })),
      at(hour),
      valid('valid', 'offline', ending, ending),
    ),
    vector(
      'license-expired-offline',
      'The license’s expiration date passes while offline.',
      kept(answer({ ...checkIn, expirationDate: ending })),
      at(13 * hour),
      invalid('expired', license('active', ending)),
    ),
    vector(
      'revoked',
      'The kept answer is a signed “revoked”: it stays invalid offline.',
      kept(answer({ isValid: false, reason: 'revoked', status: 'revoked' })),
      at(hour),
      invalid('revoked', license('revoked')),
    ),
    vector(
      'clock-wound-back',
      'Now is an hour before the answer was signed.',
      plain,
      at(-hour),
      invalid('clock_tampered', license()),
    ),
    vector(
      'clock-within-tolerance',
      'Now is 299 s before the answer was signed: within the 300 s tolerance, before the deadline.',
      plain,
      at(-299_000),
      valid('valid', 'offline', answerAt),
    ),
    vector(
      'key-canonicalised',
      'The license key given in lower case without dashes matches the Keyturn key in the answer.',
      plain,
      at(hour),
      valid('grace', 'check_in_overdue', at(3 * day)),
      { licenseKey: licenseKey.toLowerCase().replaceAll('-', '') },
    ),
    vector(
      'altered-answer',
      'The kept body changed after signing (valid again): no proof.',
      kept(answer({ isValid: false, reason: 'revoked', status: 'revoked' }), (text) =>
        text.replace('"isValid":false,"reason":"revoked"', '"isValid":true,"reason":null'),
      ),
      at(hour),
      invalid('no_proof', null),
    ),
    vector(
      'another-license',
      'The answer is for another license key: no proof.',
      plain,
      at(hour),
      invalid('no_proof', null),
      { licenseKey: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6B' },
    ),
    vector(
      'another-product',
      'The guard is for another product: no proof.',
      plain,
      at(hour),
      invalid('no_proof', null),
      { productId: otherProductId },
    ),
    vector(
      'another-signing-key',
      'Only another product’s key is configured: no proof.',
      plain,
      at(hour),
      invalid('no_proof', null),
      { publicKeys: ['other'] },
    ),
  ]
}

/** HMAC-SHA256 keyed by the application's salt over the machine's id, in lowercase hex. */
function fingerprintVectors() {
  const vector = (salt: string, machineId: string) => ({
    salt,
    machineId,
    fingerprint: createHmac('sha256', salt).update(machineId).digest('hex'),
  })
  return [
    vector('prd_3kTMd9qA8xYb2VnLr5sPwZ', '4c4c4544-0042-3510-8052-b4c04f4b4e32'),
    vector('my-app', 'b2a9e1e0d3c94f7f9a2d5c6e7f8a9b0c'),
    vector('sel ✓ é', 'MACHINE-ID-ÉÀ'),
  ]
}

/** Activation request files as `createActivationRequest` writes them, with the nonce and time fixed. */
function activationRequestVectors() {
  const vector = (
    name: string,
    description: string,
    licenseKey: string,
    payload: Parameters<typeof writeActivationRequest>[1],
  ) => ({
    name,
    description,
    licenseKey,
    payload,
    keyHint: licenseKeyHint(canonicalLicenseKey(licenseKey)),
    request: writeActivationRequest(licenseKey, payload),
  })
  const nonce = createHash('sha256')
    .update('keyturn conformance: request nonce')
    .digest()
    .subarray(0, 16)
    .toString('base64url')
  return [
    vector(
      'keyturn-key-typed-loosely',
      'A Keyturn key typed in lower case without dashes: canonicalised before the hint and the HMAC; with name and platform.',
      '7k3qd m9xtb 2vhcr 8pnwf 4zj6a'.replace(/ /g, ''),
      {
        productId,
        fingerprint: '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3',
        name: 'Lab PC 4',
        platform: 'linux-x64',
        nonce,
        created: '2030-01-01T00:00:00.000Z',
      },
    ),
    vector(
      'custom-key-exact',
      'A custom key, used exactly as given (case kept); no name or platform.',
      'Acme-Pro-2024-000183',
      {
        productId,
        fingerprint: 'machine-7f3a9c',
        nonce,
        created: '2030-06-15T12:30:45.123Z',
      },
    ),
    vector(
      'unicode-name',
      'A machine name outside ASCII: the payload is UTF-8 JSON.',
      '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A',
      {
        productId,
        fingerprint: 'machine-7f3a9c',
        name: 'Poste de Zoé ✓',
        nonce,
        created: '2030-01-01T00:00:00.000Z',
      },
    ),
    vector(
      'json-escapes',
      'A name with quotes, a backslash, HTML characters, control characters, U+2028 and an emoji: escaped exactly as JSON.stringify escapes them (" \\ \\b \\f \\n \\r \\t and \\u00xx for the other control characters; nothing else).',
      '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A',
      {
        productId,
        fingerprint: 'machine-7f3a9c',
        name: 'Zoé\'s "rack" <b>&amp; \\ \t\n\r\b\f\u0001\u001f\u007f \u2028\u2029 😀',
        platform: 'linux-x64 <dev>',
        nonce,
        created: '2030-01-01T00:00:00.000Z',
      },
    ),
    vector(
      'keyturn-key-look-alikes',
      'A Keyturn key typed with O for 0, I and L for 1, mixed case, spaces, a tab and dashes: read as 10KQD-M9XTB-2VHCR-8PNWF-4ZJ61.',
      'iOkqd M9XTB\t2vhcr--8pnwf 4zj6L',
      {
        productId,
        fingerprint: 'machine-7f3a9c',
        nonce,
        created: '2030-01-01T00:00:00.000Z',
      },
    ),
    vector(
      'keyturn-key-unicode-typing',
      "A Keyturn key typed with Unicode: a no-break space, an ideographic space and U+FEFF as separators (JavaScript's \\s), ß upper-cased to SS and a Turkish dotless ı to I (full Unicode upper case): read as SS3QD-M9XTB-2VHCR-8PNW1-4ZJ6A.",
      'ß3qd\u00a0m9xtb\u30002vhcr\ufeff8pnwı-4zj6a',
      {
        productId,
        fingerprint: 'machine-7f3a9c',
        nonce,
        created: '2030-01-01T00:00:00.000Z',
      },
    ),
    vector(
      'custom-key-shaped-like-keyturn',
      'Five groups of five, but with U (not in Crockford base32): a custom key, used exactly as given (lower case kept).',
      'abcde-fghjk-mnpqr-stuvw-xyz01',
      {
        productId,
        fingerprint: 'machine-7f3a9c',
        nonce,
        created: '2030-01-01T00:00:00.000Z',
      },
    ),
    vector(
      'custom-key-non-ascii',
      'A custom key outside ASCII: the HMAC is keyed by its UTF-8 bytes, the hint is SHA-256 of them.',
      'Clé-Öffentlich-2030',
      {
        productId,
        fingerprint: 'machine-7f3a9c',
        nonce,
        created: '2030-01-01T00:00:00.000Z',
      },
    ),
  ]
}

/** A test-only deactivation secret (base64url of 32 bytes) derived from a public label. */
function deactivationSecretOf(label: string): string {
  return createHash('sha256').update(label).digest('base64url')
}

/** Deactivation codes as `createDeactivationCode` prints them. */
function deactivationCodeVectors() {
  const secret = deactivationSecretOf('keyturn conformance: deactivation secret')
  const vector = (name: string, activationId: string, now: string) => {
    const minute = Math.floor(Date.parse(now) / 60_000)
    return {
      name,
      activationId,
      secret,
      now,
      minute,
      code: formatDeactivationCode(minute, deactivationCodeMac(secret, activationId, minute)),
    }
  }
  return [
    vector('at-a-whole-minute', 'act_9pLm3xQv7TbN2cRw5KsYdA', '2030-01-01T00:00:00.000Z'),
    vector('seconds-dropped', 'act_9pLm3xQv7TbN2cRw5KsYdA', '2030-01-01T00:00:59.999Z'),
    vector('another-activation', 'act_2Hq8RtYvN4mLp7XcKb3WsD', '2031-07-04T18:22:10.000Z'),
  ]
}

/** Every vector, as the JSON written to conformance/vectors.json. */
export async function conformanceVectors(): Promise<unknown> {
  const keyEntry = (key: ConformanceKey) => ({
    label: key.label,
    keyId: key.keyId,
    publicKeyPem: key.publicKeyPem,
  })
  return {
    $comment:
      'Generated by `npm run conformance` (packages/server/src/conformance/vectors.ts); do not edit. docs/sdks.md describes the format.',
    formatVersion: 1,
    keys: { product: keyEntry(productKey), other: keyEntry(otherKey) },
    tokens: await tokenVectors(),
    signedAnswers: signedAnswerVectors(),
    webhooks: webhookVectors(),
    fingerprints: fingerprintVectors(),
    licenseFiles: await licenseFileVectors(),
    guard: guardVectors(),
    activationRequests: activationRequestVectors(),
    deactivationCodes: deactivationCodeVectors(),
  }
}

export async function conformanceVectorsJson(): Promise<string> {
  return `${JSON.stringify(await conformanceVectors(), null, 2)}\n`
}
