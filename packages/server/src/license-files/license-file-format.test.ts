import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { describe, it } from 'node:test'
import {
  InvalidOptionError,
  LicenseFileError,
  type LicenseFileErrorCode,
  verifyLicenseFile,
} from '@keyturn/client'
import type { LicenseFilePayload } from '@keyturn/protocol'
import { calculateJwkThumbprint, exportJWK } from 'jose'
import { keyFormatOf, type LicenseFileContent, writeLicenseFile } from './license-file-format.js'

// Files written the way the server writes them, read back with @keyturn/client and, once, with
// Python's `cryptography` from the documented format alone.
const productId = 'prd_3kTMd9qA8xYb2VnLr5sPwZ'
const licenseKey = '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A'
const fingerprint = '4f9c2b7e1a6d3f08c5e2b9a7d4c1f6e3'
const now = new Date('2030-01-01T00:00:00.000Z')

interface Signer {
  readonly privateKey: KeyObject
  readonly publicKeyPem: string
  readonly keyId: string
}

async function aSigner(): Promise<Signer> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const keyId = await calculateJwkThumbprint(await exportJWK(publicKey), 'sha256')
  return { privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), keyId }
}

const signer = await aSigner()
const otherSigner = await aSigner()

const payload: LicenseFilePayload = {
  license: {
    id: 'lic_7fQx2mNc4RtYp9LkWv3bHs',
    status: 'active',
    expirationDate: '2031-01-01T00:00:00.000Z',
    policy: 'Pro',
    entitlements: ['export', 'sync'],
    maxActivations: 3,
    maxUses: null,
    uses: 0,
  },
}
const machinePayload: LicenseFilePayload = {
  ...payload,
  machine: { activationId: 'act_2bQx9mNc4RtYp9LkWv3bHs', fingerprint },
}

function aFile(overrides: Partial<LicenseFileContent> = {}, by: Signer = signer): Promise<string> {
  return writeLicenseFile(
    {
      keyId: by.keyId,
      productId,
      issued: now,
      expiry: new Date('2030-02-01T00:00:00.000Z'),
      payload,
      licenseKey,
      ...overrides,
    },
    (data) => Promise.resolve(sign(null, data, by.privateKey)),
  )
}

const verify = (file: string, extra: Partial<Parameters<typeof verifyLicenseFile>[1]> = {}) =>
  verifyLicenseFile(file, { productId, publicKey: signer.publicKeyPem, now, ...extra })

async function assertRefused(promise: Promise<unknown>, code: LicenseFileErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof LicenseFileError, `not a LicenseFileError: ${String(error)}`)
    assert.equal(error.code, code, error.message)
    return true
  })
}

/** The three dot-separated parts of a file's body. */
function partsOf(file: string): string[] {
  return file.split('\n').slice(1, -2).join('').split('.')
}

/** The file with one character of its payload part changed (the signature no longer covers it). */
function tampered(file: string): string {
  const [header = '', payloadPart = '', signature = ''] = partsOf(file)
  const changed = payloadPart[10] === 'A' ? 'B' : 'A'
  const body = `${header}.${payloadPart.slice(0, 10)}${changed}${payloadPart.slice(11)}.${signature}`
  return `-----BEGIN KEYTURN LICENSE FILE-----\n${body.match(/.{1,64}/g)?.join('\n')}\n-----END KEYTURN LICENSE FILE-----\n`
}

describe('license files', () => {
  it('round trip: armoured, clear header, read back with the entitlements and the file expiry', async () => {
    const file = await aFile()
    assert.match(
      file,
      /^-----BEGIN KEYTURN LICENSE FILE-----\n([A-Za-z0-9_.-]{1,64}\n)+-----END KEYTURN LICENSE FILE-----\n$/,
    )
    const result = await verify(file)
    assert.deepEqual(result, {
      licenseId: payload.license.id,
      productId,
      expiresAt: '2030-02-01T00:00:00.000Z',
      issuedAt: now.toISOString(),
      customFields: {},
      entitlements: ['export', 'sync'],
      license: payload.license,
      keyId: signer.keyId,
      encrypted: false,
    })
    // The JWK form of the key and a key list (retired key first) verify it too.
    const jwk = { ...(await exportJWK(createPublicKey(signer.publicKeyPem))), kid: signer.keyId }
    assert.equal(
      (await verify(file, { publicKey: [otherSigner.publicKeyPem, jwk] })).licenseId,
      payload.license.id,
    )
    assert.equal((await verify(await aFile({ expiry: null }))).expiresAt, null)
  })

  it('encrypted with HKDF from a Keyturn key: read with the key however it is typed, refused with another', async () => {
    const file = await aFile({ encrypt: {} })
    assert.equal(file.includes('export'), false)
    await assertRefused(verify(file), 'decryption_failed')
    assert.deepEqual((await verify(file, { licenseKey })).entitlements, ['export', 'sync'])
    assert.equal((await verify(file, { licenseKey: '7k3qd m9xtb 2vhcr 8pnwf 4zj6a' })).encrypted, true)
    await assertRefused(verify(file, { licenseKey: '7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6B' }), 'decryption_failed')
  })

  it('custom keys use PBKDF2 (stored in the header) and are used exactly as given', async () => {
    assert.equal(keyFormatOf(licenseKey), 'keyturn')
    assert.equal(keyFormatOf('acme-2030-gold'), 'custom')
    const file = await aFile({ licenseKey: 'acme-2030-gold', encrypt: {} })
    const header = JSON.parse(Buffer.from(partsOf(file)[0] ?? '', 'base64url').toString())
    assert.equal(header.keyFormat, 'custom')
    assert.equal(header.encryption.kdf, 'PBKDF2-SHA256')
    assert.equal(header.encryption.iterations, 600_000)
    assert.equal((await verify(file, { licenseKey: 'acme-2030-gold' })).licenseId, payload.license.id)
    await assertRefused(verify(file, { licenseKey: 'ACME-2030-GOLD' }), 'decryption_failed')
  })

  it('a machine file is for its machine only', async () => {
    const plain = await aFile({ payload: machinePayload })
    const result = await verify(plain, { fingerprint })
    assert.equal(result.fingerprint, fingerprint)
    assert.equal(result.activationId, 'act_2bQx9mNc4RtYp9LkWv3bHs')
    await assertRefused(verify(plain, { fingerprint: 'another-machine' }), 'fingerprint_mismatch')
    await assertRefused(verify(await aFile(), { fingerprint }), 'fingerprint_mismatch')
    const encrypted = await aFile({ payload: machinePayload, encrypt: { fingerprint } })
    assert.equal((await verify(encrypted, { fingerprint, licenseKey })).fingerprint, fingerprint)
    await assertRefused(verify(encrypted, { licenseKey }), 'decryption_failed')
    await assertRefused(
      verify(encrypted, { fingerprint: 'another-machine', licenseKey }),
      'decryption_failed',
    )
  })

  it('refuses tampered, foreign, expired, early and malformed files with their codes', async () => {
    const file = await aFile()
    await assertRefused(verify(tampered(file)), 'invalid_signature')
    await assertRefused(verify(tampered(await aFile({ encrypt: {} })), { licenseKey }), 'invalid_signature')
    await assertRefused(verify(file, { productId: 'prd_9ZqLm2Xc7VbN4KtRw8YpHd' }), 'product_mismatch')
    await assertRefused(verify(file, { publicKey: otherSigner.publicKeyPem }), 'unknown_key')
    // Signed by another key that claims the product key's id.
    await assertRefused(verify(await aFile({}, { ...otherSigner, keyId: signer.keyId })), 'invalid_signature')
    await assertRefused(verify(file, { now: new Date('2030-02-01T00:00:00.000Z') }), 'expired')
    assert.equal(
      (await verify(file, { now: new Date('2030-02-01T00:00:00.000Z'), clockToleranceSeconds: 1 })).licenseId,
      payload.license.id,
    )
    await assertRefused(verify(file, { now: new Date('2029-12-31T23:59:59.000Z') }), 'not_yet_valid')
    await assertRefused(verify(file, { requireEntitlements: ['sync', 'admin'] }), 'entitlements_missing')
    await assertRefused(verify(file.replace('BEGIN KEYTURN', 'BEGIN SOMEONE')), 'malformed')
    await assertRefused(
      verify(file.replace(/\.[^.]*$/s, '.AAAA\n-----END KEYTURN LICENSE FILE-----\n')),
      'malformed',
    )
    await assertRefused(verify('x'.repeat(70_000)), 'malformed')
  })

  it('refuses an invalid clock or tolerance instead of accepting the file', async () => {
    const file = await aFile()
    for (const options of [
      { now: new Date(Number.NaN) },
      { clockToleranceSeconds: Number.NaN },
      { clockToleranceSeconds: Number.POSITIVE_INFINITY },
      { clockToleranceSeconds: -1 },
    ]) {
      await assert.rejects(verify(file, options), InvalidOptionError)
    }
  })

  it('verifies and decrypts with Python cryptography from the documented format alone', async () => {
    const file = await aFile({ payload: machinePayload, encrypt: { fingerprint } })
    const output = execFileSync(
      'python3',
      ['-c', pythonReader, licenseKey, fingerprint, signer.publicKeyPem],
      {
        input: file,
        encoding: 'utf8',
      },
    )
    assert.deepEqual(JSON.parse(output), { productId, payload: machinePayload })
  })
})

// docs/guides/offline.md, "The file format", step by step.
const pythonReader = `
import base64, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

def b64(part):
    return base64.urlsafe_b64decode(part + '=' * (-len(part) % 4))

license_key, fingerprint, pem = sys.argv[1], sys.argv[2], sys.argv[3]
lines = sys.stdin.read().strip().split('\\n')
assert lines[0] == '-----BEGIN KEYTURN LICENSE FILE-----' and lines[-1] == '-----END KEYTURN LICENSE FILE-----'
header_b64, payload_b64, signature_b64 = ''.join(lines[1:-1]).split('.')
public_key = load_pem_public_key(pem.encode())
assert isinstance(public_key, Ed25519PublicKey)
public_key.verify(b64(signature_b64), (header_b64 + '.' + payload_b64).encode('ascii'))
header = json.loads(b64(header_b64))
assert header['format'] == 'keyturn-license-file/1' and header['alg'] == 'EdDSA'
enc = header['encryption']
assert enc['kdf'] == 'HKDF-SHA256' and enc['machineBound']
material = (license_key + '\\n' + fingerprint).encode()
key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b64(enc['salt']), info=b'keyturn-license-file/1 aes-256-gcm').derive(material)
clear = AESGCM(key).decrypt(b64(enc['iv']), b64(payload_b64), header_b64.encode('ascii'))
print(json.dumps({'productId': header['productId'], 'payload': json.loads(clear)}))
`
