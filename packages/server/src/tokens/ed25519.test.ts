import assert from 'node:assert/strict'
import { generateKeyPairSync, verify } from 'node:crypto'
import { describe, it } from 'node:test'
import { ed25519Signer } from './ed25519.js'

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
})
