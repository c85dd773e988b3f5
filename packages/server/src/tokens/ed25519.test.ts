import assert from 'node:assert/strict'
import { generateKeyPairSync, verify } from 'node:crypto'
import { describe, it } from 'node:test'
import { jwtVerify, SignJWT } from 'jose'
import { ed25519Signer, signJwt } from './ed25519.js'

describe('ed25519Signer', () => {
  it('signs the same bytes on the thread pool (node:crypto) and on the event loop (libsodium)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    const data = Buffer.from('"@status": 200\n"@signature-params": ("@status");created=1800000000')
    const onPool = await ed25519Signer(privateKey, 'thread-pool')(data)
    const onLoop = await ed25519Signer(privateKey, 'event-loop')(data)
    assert.equal(onLoop.toString('base64'), onPool.toString('base64'))
    assert.ok(verify(null, data, publicKey, onLoop))
    assert.ok(!verify(null, Buffer.from('something else'), publicKey, onLoop))
  })

  it('refuses a key that is not Ed25519', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    assert.throws(() => ed25519Signer(privateKey, 'event-loop'), /Ed25519/)
  })

  it('signs a JWT to the same string as jose, which jose verifies, in both places', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519')
    const claims = {
      licenseId: 'lic_1',
      customFields: { note: 'é ✓ "quoted"', n: [1, 2.5] },
      entitlements: [],
    }
    const fromJose = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'keyturn-license+jwt', kid: 'key_1' })
      .setIssuer('keyturn')
      .setSubject('lic_1')
      .setAudience('prd_1')
      .setIssuedAt(1_800_000_000)
      .setNotBefore(1_800_000_000)
      .setExpirationTime(1_800_086_400)
      .setJti('tok_1')
      .sign(privateKey)
    const header = { alg: 'EdDSA', typ: 'keyturn-license+jwt', kid: 'key_1' }
    const registered = { iss: 'keyturn', sub: 'lic_1', aud: 'prd_1', iat: 1_800_000_000, nbf: 1_800_000_000 }
    const all = { ...claims, ...registered, exp: 1_800_086_400, jti: 'tok_1' }
    for (const place of ['thread-pool', 'event-loop'] as const) {
      const ours = await signJwt(header, all, ed25519Signer(privateKey, place))
      assert.equal(ours, fromJose)
      const { payload } = await jwtVerify(ours, publicKey, { currentDate: new Date(1_800_000_000_000) })
      assert.deepEqual(payload, all)
    }
  })
})
