import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { it } from 'node:test'
import { buildTestApp, type TestApp } from '../../testing/build-test-app.js'
import { describeEachDatabase } from '../../testing/each-database.js'

// An `order_created` delivery shaped as Lemon Squeezy documents it (docs.lemonsqueezy.com, "Webhooks"
// → "Example payloads", trimmed to the fields Keyturn reads).
const orderCreated = readFileSync(
  new URL('../../../src/integrations/fixtures/lemonsqueezy-order-created.json', import.meta.url),
)
const secret = 'ls-webhook-signing-secret'

function sign(body: Buffer | string, key = secret): string {
  return createHmac('sha256', key).update(body).digest('hex')
}

async function lemonSqueezyIntegration(test: TestApp): Promise<string> {
  const res = await test.app.inject({
    method: 'POST',
    url: '/api/v0/integrations',
    headers: test.headers,
    payload: { provider: 'lemonsqueezy', signingSecret: secret },
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

describeEachDatabase('receiving Lemon Squeezy webhooks', (database) => {
  it('records a signed event once under 10 concurrent deliveries over HTTP; a bad signature or body records nothing', async (t) => {
    const test = await buildTestApp(t, database)
    const id = await lemonSqueezyIntegration(test)
    const base = await test.app.listen({ port: 0, host: '127.0.0.1' })
    const url = `${base}/api/v0/integrations/${id}/webhook`
    const post = (body: Buffer | string, signature: string | undefined) =>
      fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(signature === undefined ? {} : { 'x-signature': signature }),
        },
        body,
      })

    const badSignature = await post(orderCreated, sign(orderCreated, 'another-secret'))
    assert.equal(badSignature.status, 400)
    assert.equal(((await badSignature.json()) as { code: string }).code, 'provider_signature_invalid')
    assert.equal((await post(orderCreated, undefined)).status, 400)
    const notJson = await post('{"meta":', sign('{"meta":'))
    assert.equal(notJson.status, 400)
    assert.equal(((await notJson.json()) as { code: string }).code, 'bad_request')

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(orderCreated, sign(orderCreated))),
    )
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(200),
    )
    const receipts = (await Promise.all(answers.map((a) => a.json()))) as { duplicate: boolean }[]
    assert.equal(receipts.filter((r) => r.duplicate === false).length, 1)

    const events = await test.app.inject({
      method: 'GET',
      url: `/api/v0/integrations/${id}/events`,
      headers: test.headers,
    })
    assert.deepEqual(
      events
        .json()
        .data.map((e: { dedupeKey: string; eventType: string; status: string }) => [
          e.dedupeKey,
          e.eventType,
          e.status,
        ]),
      [['order_created:1:2021-08-17T09:45:53.000000Z', 'order_created', 'pending']],
    )
  })
})
