import assert from 'node:assert/strict'
import type { LookupAddress } from 'node:dns'
import { describe, it } from 'node:test'
import { type HostLookup, HttpWebhookSender, maxConcurrentLookups } from './http-webhook-sender.js'

/** A lookup that answers only when told: what a silent DNS server looks like. */
function heldLookup() {
  const pending: {
    hostname: string
    answer: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void
  }[] = []
  const lookup: HostLookup = (hostname, _options, callback) => {
    pending.push({ hostname, answer: callback })
  }
  return { lookup, pending }
}

const request = (n: number) => ({
  url: `https://hooks-${n}.example/receive`,
  id: `evt_${n}`,
  timestamp: new Date('2030-01-01T00:00:00Z'),
  body: '{}',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
})

describe('webhook hostname lookups', () => {
  it('runs at most maxConcurrentLookups at once and starts the next when one answers', async () => {
    const dns = heldLookup()
    const sender = new HttpWebhookSender({ allowPrivate: false, version: 'test', lookup: dns.lookup })

    const sends = [1, 2, 3, 4, 5].map((n) => sender.send(request(n)))
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(dns.pending.length, maxConcurrentLookups, 'the others wait without taking a thread')

    const notFound = Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    for (let answered = 0; answered < 5; answered++) {
      const next = dns.pending[answered]
      assert.ok(next, `lookup ${answered + 1} started`)
      next.answer(notFound, [])
      await new Promise((resolve) => setImmediate(resolve))
    }
    const results = await Promise.all(sends)
    assert.deepEqual(
      results.map((result) => result.kind === 'failed' && result.error),
      Array(5).fill('The request failed (ENOTFOUND).'),
    )
    assert.deepEqual(
      dns.pending.map((lookup) => lookup.hostname),
      ['hooks-1.example', 'hooks-2.example', 'hooks-3.example', 'hooks-4.example', 'hooks-5.example'],
    )
  })

  it('refuses a hostname that resolves only to private addresses', async () => {
    const dns = heldLookup()
    const sender = new HttpWebhookSender({ allowPrivate: false, version: 'test', lookup: dns.lookup })
    const sent = sender.send(request(1))
    await new Promise((resolve) => setImmediate(resolve))
    dns.pending[0]?.answer(null, [{ address: '169.254.169.254', family: 4 }])
    const result = await sent
    assert.equal(result.kind, 'failed')
    assert.match(result.kind === 'failed' ? result.error : '', /resolves only to private/)
  })
})
