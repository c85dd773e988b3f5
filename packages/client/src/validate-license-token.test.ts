import assert from 'node:assert/strict'
import { createHmac, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { describe, it } from 'node:test'
import { base64url, calculateJwkThumbprint, exportJWK, type JWTPayload, SignJWT } from 'jose'
import { InvalidOptionError } from './clock.js'
import { LicenseTokenError, type LicenseTokenErrorCode } from './errors.js'
import { validateLicenseToken } from './validate-license-token.js'

// Tokens made here the way the server makes them (tokens/token-service.ts), so each attack changes one thing.
const productId = 'prd_3kTMd9qA8xYb2VnLr5sPwZ'
const licenseId = 'lic_7fQx2mNc4RtYp9LkWv3bHs'
const now = new Date('2030-01-01T00:00:00.000Z')
const at = (iso: string) => Date.parse(iso) / 1000

interface Signer {
  readonly privateKey: KeyObject
  readonly publicKeyPem: string
  readonly kid: string
}

async function aSigner(): Promise<Signer> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey), 'sha256')
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), kid }
}

const signer = await aSigner()
const otherSigner = await aSigner()

function claims(overrides: Record<string, unknown> = {}): JWTPayload {
  return {
    licenseId,
    productId,
    expirationDate: '2030-01-31T00:00:00.000Z',
    createdAt: '2030-01-01T00:00:00.000Z',
    customFields: { plan: 'pro' },
    iss: 'keyturn',
    sub: licenseId,
    aud: productId,
    iat: at('2030-01-01T00:00:00.000Z'),
    nbf: at('2030-01-01T00:00:00.000Z'),
    exp: at('2030-01-31T00:00:00.000Z'),
    jti: 'tok_abc',
    ...overrides,
  }
}

function aToken(
  options: { claims?: Record<string, unknown>; header?: Record<string, unknown>; signer?: Signer } = {},
): Promise<string> {
  const by = options.signer ?? signer
  return new SignJWT(claims(options.claims))
    .setProtectedHeader({ alg: 'EdDSA', typ: 'license+jwt', kid: by.kid, ...options.header })
    .sign(by.privateKey)
}

const validate = (token: string, extra: Partial<Parameters<typeof validateLicenseToken>[0]> = {}) =>
  validateLicenseToken({ productId, publicKey: signer.publicKeyPem, token, now, ...extra })

async function assertRejects(promise: Promise<unknown>, code: LicenseTokenErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof LicenseTokenError, `not a LicenseTokenError: ${String(error)}`)
    assert.equal(error.code, code, error.message)
    return true
  })
}

const encode = (value: unknown) => base64url.encode(JSON.stringify(value))

describe('validateLicenseToken', () => {
  it('returns the offline result for a valid token, with a PEM or a JWK', async () => {
    const token = await aToken()
    const expected = {
      licenseId,
      expiresAt: '2030-01-31T00:00:00.000Z',
      productId,
      customFields: { plan: 'pro' },
      issuedAt: '2030-01-01T00:00:00.000Z',
      entitlements: [],
    }

    const jwk = await exportJWK(createPublicKey(signer.publicKeyPem))
    const unrelatedJwk = await exportJWK(generateKeyPairSync('ed25519').publicKey)

    assert.deepEqual(await validate(token), expected)
    assert.deepEqual(await validate(token, { publicKey: { ...jwk, kid: signer.kid } }), expected)
    assert.deepEqual(await validate(token, { publicKey: jwk }), expected) // kid computed as the thumbprint
    assert.deepEqual(
      await validate(token, { publicKey: [{ ...unrelatedJwk, kid: 'other' }, signer.publicKeyPem] }),
      expected,
    )
  })

  it('returns empty customFields when the token has none', async () => {
    const token = await aToken({ claims: { customFields: undefined } })
    assert.deepEqual((await validate(token)).customFields, {})
  })

  it('rejects alg none with unsupported_algorithm', async () => {
    const token = `${encode({ alg: 'none', typ: 'license+jwt', kid: signer.kid })}.${encode(claims())}.`
    await assertRejects(validate(token), 'unsupported_algorithm')
  })

  it('rejects HS256 signed with the public key as the secret with unsupported_algorithm', async () => {
    const signingInput = `${encode({ alg: 'HS256', typ: 'license+jwt', kid: signer.kid })}.${encode(claims())}`
    const mac = createHmac('sha256', signer.publicKeyPem).update(signingInput).digest('base64url')
    await assertRejects(validate(`${signingInput}.${mac}`), 'unsupported_algorithm')
  })

  it('rejects a tampered payload with invalid_signature', async () => {
    const [header, , signature] = (await aToken()).split('.')
    const forged = encode(claims({ customFields: { plan: 'enterprise' } }))
    await assertRejects(validate(`${header}.${forged}.${signature}`), 'invalid_signature')
  })

  it('rejects a tampered header with invalid_signature', async () => {
    const [, payload, signature] = (await aToken()).split('.')
    const header = encode({ alg: 'EdDSA', typ: 'license+jwt', kid: signer.kid, extra: 1 })
    await assertRejects(validate(`${header}.${payload}.${signature}`), 'invalid_signature')
  })

  it('rejects a token signed by another product’s key under this key id with invalid_signature', async () => {
    const token = await aToken({ signer: otherSigner, header: { kid: signer.kid } })
    await assertRejects(validate(token), 'invalid_signature')
  })

  it('rejects a token whose key id matches no configured key with invalid_signature', async () => {
    await assertRejects(validate(await aToken({ header: { kid: 'unknown-kid' } })), 'invalid_signature')
    await assertRejects(validate(await aToken({ signer: otherSigner })), 'invalid_signature')
  })

  it('rejects a token for another product with product_mismatch', async () => {
    const token = await aToken()
    await assertRejects(validate(token, { productId: 'prd_other' }), 'product_mismatch')
  })

  it('rejects an expired token with expired, and accepts it within clockToleranceSeconds', async () => {
    const token = await aToken()
    const later = new Date('2030-01-31T00:00:30.000Z')
    await assertRejects(validate(token, { now: later }), 'expired')
    assert.equal((await validate(token, { now: later, clockToleranceSeconds: 60 })).licenseId, licenseId)
  })

  it('refuses an invalid clock or tolerance with InvalidOptionError instead of accepting more', async () => {
    const token = await aToken()
    const expiredBy = (seconds: number) => new Date(Date.parse('2030-01-31T00:00:00.000Z') + seconds * 1000)
    const invalid: [string, Partial<Parameters<typeof validateLicenseToken>[0]>][] = [
      ['now', { now: new Date(Number.NaN) }],
      ['now', { now: '2030-01-01T00:00:00Z' as unknown as Date }],
      ['now', { now: Date.parse('2030-01-01T00:00:00Z') as unknown as Date }],
      ['clockToleranceSeconds', { now: expiredBy(1), clockToleranceSeconds: Number.NaN }],
      [
        'clockToleranceSeconds',
        { now: expiredBy(11 * 86_400), clockToleranceSeconds: Number.POSITIVE_INFINITY },
      ],
      ['clockToleranceSeconds', { now: expiredBy(11 * 86_400), clockToleranceSeconds: 11 * 86_400 }],
      ['clockToleranceSeconds', { now: expiredBy(1), clockToleranceSeconds: -5 }],
      ['clockToleranceSeconds', { now: expiredBy(1), clockToleranceSeconds: '60' as unknown as number }],
    ]
    for (const [option, extra] of invalid) {
      await assert.rejects(validate(token, extra), (error: unknown) => {
        assert.ok(error instanceof InvalidOptionError, `${option}: ${String(error)}`)
        assert.equal(error.option, option)
        return true
      })
    }
    assert.equal(
      (await validate(token, { now: expiredBy(1), clockToleranceSeconds: 3600 })).licenseId,
      licenseId,
    )
  })

  it('rejects a token that is not valid yet with not_yet_valid', async () => {
    const token = await aToken()
    await assertRejects(validate(token, { now: new Date('2029-12-31T23:59:00.000Z') }), 'not_yet_valid')
  })

  it('rejects a signed token that requires an extension (crit) with unsupported_algorithm', async () => {
    const header = encode({
      alg: 'EdDSA',
      typ: 'license+jwt',
      kid: signer.kid,
      crit: ['exp-ext'],
      'exp-ext': 1,
    })
    const signingInput = `${header}.${encode(claims())}`
    const signature = base64url.encode(sign(null, Buffer.from(signingInput), signer.privateKey))
    await assertRejects(validate(`${signingInput}.${signature}`), 'unsupported_algorithm')
  })

  it('rejects a token of another type with malformed', async () => {
    await assertRejects(validate(await aToken({ header: { typ: 'JWT' } })), 'malformed')
  })

  it('rejects a correctly signed token without license claims with malformed', async () => {
    await assertRejects(validate(await aToken({ claims: { licenseId: 42 } })), 'malformed')
    await assertRejects(validate(await aToken({ claims: { sub: 'lic_someoneElse' } })), 'malformed')
    await assertRejects(validate(await aToken({ claims: { iss: 'someone' } })), 'malformed')
  })

  it('rejects truncated, non-base64, empty and oversized tokens with malformed', async () => {
    const token = await aToken()
    const [header, payload, signature = ''] = token.split('.')
    await assertRejects(validate(token.slice(0, token.lastIndexOf('.'))), 'malformed')
    await assertRejects(validate(`${header}.${payload}.${signature.slice(0, 40)}`), 'malformed')
    await assertRejects(validate(`${header}.${payload}`), 'malformed')
    await assertRejects(validate('not a token at all'), 'malformed')
    await assertRejects(validate('%%%.@@@.***'), 'malformed')
    await assertRejects(validate(''), 'malformed')
    await assertRejects(validate(`${header}.${payload}.${signature}${'A'.repeat(20_000)}`), 'malformed')
  })

  it('rejects 10,000 random mutations of a valid token', async () => {
    const token = await aToken()
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.='
    let seed = 20301101
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648 // a fixed LCG: failures reproduce
      return seed % below
    }
    let checked = 0
    while (checked < 10_000) {
      const chars = [...token]
      const edits = 1 + random(3)
      for (let edit = 0; edit < edits; edit++) {
        const position = random(chars.length)
        const kind = random(3)
        const char = alphabet[random(alphabet.length)] ?? 'A'
        if (kind === 0) {
          chars[position] = char
        } else if (kind === 1) {
          chars.splice(position, 1)
        } else {
          chars.splice(position, 0, char)
        }
      }
      const mutated = chars.join('')
      if (mutated === token) {
        continue
      }
      checked++
      await assert.rejects(validate(mutated), LicenseTokenError, `accepted a mutation: ${mutated}`)
    }
  })
})
