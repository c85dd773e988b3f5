import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { verifyWebhook, WebhookSignatureError } from './verify-webhook.js'

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo='
const event = {
  id: 'evt_01hzt0000000000000000000',
  object: 'Event',
  type: 'license.revoked',
  occurredAt: '2030-01-01T00:00:00.000Z',
  productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
  actor: { type: 'apiKey', id: 'key_5bVn8cXz2LkJh4GfDs6aQw', role: 'admin' },
  requestId: 'req_6Gm2TqVx9LpRk4NcYb8WsH',
  data: { id: 'lic_7fQx2mNc4RtYp9LkWv3bHs', object: 'License' },
}

/** Signed the way Keyturn's delivery worker signs (the same standardwebhooks package). */
function delivery(payload: string, at = new Date(), key = secret) {
  return {
    'webhook-id': event.id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign(event.id, at, payload),
  }
}

describe('verifyWebhook', () => {
  it('returns the event of a genuine delivery, from a plain object or a Headers', () => {
    const payload = JSON.stringify(event)
    assert.deepEqual(verifyWebhook({ payload, headers: delivery(payload), secret }), event)
    assert.deepEqual(verifyWebhook({ payload, headers: new Headers(delivery(payload)), secret }), event)
  })

  it('accepts event types and kinds of actor newer than this client, and refuses a body without the envelope', () => {
    const newer = JSON.stringify({
      ...event,
      type: 'subscription.paused',
      actor: { type: 'robot', id: 'rbt_1' },
      data: { anything: [1, 2] },
    })
    assert.equal(
      verifyWebhook({ payload: newer, headers: delivery(newer), secret }).type,
      'subscription.paused',
    )
    for (const broken of [
      { ...event, object: 'Order' },
      { ...event, actor: { apiKeyId: 'key_a' } },
      { ...event, data: 'text' },
      { ...event, id: undefined },
    ]) {
      const payload = JSON.stringify(broken)
      assert.throws(
        () => verifyWebhook({ payload, headers: delivery(payload), secret }),
        (error: unknown) => error instanceof WebhookSignatureError && error.code === 'not_an_event',
        payload,
      )
    }
  })

  it('throws WebhookSignatureError when the body, the secret, the timestamp or the headers are wrong', () => {
    const payload = JSON.stringify(event)
    const cases = [
      { payload: payload.replace('revoked', 'created'), headers: delivery(payload), secret },
      {
        payload,
        headers: delivery(payload, new Date(), 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='),
        secret,
      },
      { payload, headers: delivery(payload, new Date(Date.now() - 10 * 60 * 1000)), secret },
      { payload, headers: {}, secret },
    ]
    for (const options of cases) {
      assert.throws(() => verifyWebhook(options), WebhookSignatureError)
    }
  })

  it('throws when a correctly signed payload is not a Keyturn event', () => {
    const payload = JSON.stringify({ hello: 'world' })
    assert.throws(() => verifyWebhook({ payload, headers: delivery(payload), secret }), /not a Keyturn event/)
  })
})
