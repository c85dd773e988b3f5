import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createActivationRequest, createDeactivationCode, InvalidOptionError } from './index.js'

const secret = 'x'.repeat(43)
const request = { licenseKey: 'Acme-1', productId: 'prd_x', fingerprint: 'machine' }

/** Refused with an InvalidOptionError naming the option: nothing written. */
async function refused(write: () => Promise<string>, option: string): Promise<void> {
  await assert.rejects(
    write,
    (error: unknown) => error instanceof InvalidOptionError && error.option === option,
  )
}

describe('offline activation: bad options are refused, never written', () => {
  it('a request with an invalid time, an empty or too long field', async () => {
    for (const now of [
      new Date(Number.NaN),
      new Date(Date.UTC(10000, 0, 1)),
      new Date(-62_200_000_000_000),
    ]) {
      await refused(() => createActivationRequest({ ...request, now }), 'now')
    }
    await refused(() => createActivationRequest({ ...request, fingerprint: '' }), 'fingerprint')
    await refused(() => createActivationRequest({ ...request, name: '😀'.repeat(101) }), 'name')
    const longest = await createActivationRequest({
      ...request,
      name: '😀'.repeat(100),
      now: new Date('9999-12-31T23:59:59.999Z'),
    })
    assert.match(longest, /^-----BEGIN KEYTURN ACTIVATION REQUEST-----\n/)
  })

  it('a code dated before 1970 or after 9999, or with a bad secret', async () => {
    const activationId = 'act_x'
    for (const now of [new Date(-60_000), new Date(Date.UTC(10000, 0, 1)), new Date(Number.NaN)]) {
      await refused(() => createDeactivationCode({ activationId, secret, now }), 'now')
    }
    await refused(() => createDeactivationCode({ activationId, secret: `${secret}\n` }), 'secret')
    await refused(() => createDeactivationCode({ activationId: '', secret }), 'activationId')
  })
})
