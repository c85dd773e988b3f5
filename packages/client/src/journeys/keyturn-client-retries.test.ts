import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe, it } from 'node:test'
import {
  KeyturnApiError,
  KeyturnClient,
  type KeyturnClientOptions,
  KeyturnConnectionError,
} from '@keyturn/client'
import { testAdminSecret } from '@keyturn/server/testing/build-test-app'
import { describeEachDatabase } from '@keyturn/server/testing/each-database'
import { serveHttp, startTestServer } from '@keyturn/server/testing/listening-app'

/** What the test server does with the n-th request it gets. */
type Step = (request: IncomingMessage, response: ServerResponse) => void

const drop: Step = (request) => request.socket.destroy()
const status =
  (code: number, headers: Record<string, string> = {}): Step =>
  (_request, response) => {
    response.writeHead(code, { 'content-type': 'application/problem+json', ...headers })
    response.end(
      JSON.stringify({
        type: '/problems/x',
        title: 'x',
        status: code,
        detail: 'x',
        code: 'internal_error',
        requestId: 'req_x',
      }),
    )
  }
const ok: Step = (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' })
  response.end(JSON.stringify({ id: 'lic_1', ok: true }))
}

/** A loopback HTTP server that plays `steps` in order (the last one repeats) and records each request. */
async function scriptedServer(t: Parameters<typeof serveHttp>[0], steps: Step[]) {
  const requests: { method: string; url: string; idempotencyKey: string | undefined }[] = []
  const baseUrl = await serveHttp(t, (request, response) => {
    const key = request.headers['idempotency-key']
    requests.push({
      method: request.method ?? '',
      url: request.url ?? '',
      idempotencyKey: key as string | undefined,
    })
    const step = steps[Math.min(requests.length - 1, steps.length - 1)]
    request.resume()
    request.on('end', () => step?.(request, response))
  })
  return { baseUrl, requests }
}

/** A client whose waits are recorded instead of slept. */
function clientWithoutSleeps(baseUrl: string, options: Partial<KeyturnClientOptions> = {}) {
  const waits: number[] = []
  const client = new KeyturnClient({
    baseUrl,
    apiKey: testAdminSecret,
    random: () => 0.5,
    sleep: async (ms) => {
      waits.push(ms)
    },
    ...options,
  })
  return { client, waits }
}

describe('KeyturnClient retries, against a loopback server', () => {
  it('retries a GET after a dropped connection and two 503s, backing off with jitter', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [drop, status(503), status(503), ok])
    const { client, waits } = clientWithoutSleeps(baseUrl, { maxRetries: 3 })

    const license = await client.getLicense('lic_1')

    assert.deepEqual(license, { id: 'lic_1', ok: true })
    assert.equal(requests.length, 4)
    assert.deepEqual(waits, [125, 250, 500]) // random 0.5 × 250 ms × 2^attempt
  })

  it('gives up after maxRetries and rejects with the last answer', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [status(503)])
    const { client, waits } = clientWithoutSleeps(baseUrl)

    await assert.rejects(client.getLicense('lic_1'), (error: unknown) => {
      assert.ok(error instanceof KeyturnApiError)
      assert.equal(error.status, 503)
      return true
    })
    assert.equal(requests.length, 3, 'one attempt and the default two retries')
    assert.equal(waits.length, 2)
  })

  it('waits as long as a 429 Retry-After asks, and not at all past retryMaxDelayMs', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [status(429, { 'retry-after': '3' }), ok])
    const { client, waits } = clientWithoutSleeps(baseUrl)

    await client.listLicenses()

    assert.deepEqual(waits, [3000])
    assert.equal(requests.length, 2)

    const tooLong = await scriptedServer(t, [status(429, { 'retry-after': '120' }), ok])
    const patient = clientWithoutSleeps(tooLong.baseUrl)
    await assert.rejects(patient.client.listLicenses(), (error: unknown) => {
      assert.ok(error instanceof KeyturnApiError)
      assert.equal(error.status, 429)
      assert.equal(error.retryAfterMs, 120_000)
      return true
    })
    assert.deepEqual(patient.waits, [])
    assert.equal(tooLong.requests.length, 1)
  })

  it('retries a POST with one generated Idempotency-Key, the same on every attempt', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [drop, status(502), ok])
    const { client } = clientWithoutSleeps(baseUrl)

    await client.revokeLicense('lic_1')
    await client.revokeLicense('lic_1')

    const keys = requests.map((request) => request.idempotencyKey)
    assert.equal(requests.length, 4)
    assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.deepEqual([keys[1], keys[2]], [keys[0], keys[0]], 'the retries of one call share its key')
    assert.notEqual(keys[3], keys[0], 'another call gets another key')
  })

  it('retries a validation and a heartbeat, whose repeats change nothing more, without a generated key', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [status(503), ok, status(503), ok, status(503), ok])
    const { client } = clientWithoutSleeps(baseUrl)

    await client.validateLicense({ key: 'K', productId: 'prd_1' })
    await client.heartbeatLicenseByKey({ key: 'K', productId: 'prd_1', fingerprint: 'machine-1' })
    await client.heartbeatActivation('act_1')

    assert.deepEqual(
      requests.map(({ url, idempotencyKey }) => [url, idempotencyKey]),
      [
        ['/api/v0/licenses/validate', undefined],
        ['/api/v0/licenses/validate', undefined],
        ['/api/v0/licenses/heartbeat', undefined],
        ['/api/v0/licenses/heartbeat', undefined],
        ['/api/v0/activations/act_1/heartbeat', undefined],
        ['/api/v0/activations/act_1/heartbeat', undefined],
      ],
    )
  })

  it('sends the given idempotencyKey, and retries that POST too', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [status(503), ok])
    const { client } = clientWithoutSleeps(baseUrl)

    await client.createLicense({ productId: 'prd_1' }, { idempotencyKey: 'order-4711' })

    assert.deepEqual(
      requests.map((request) => request.idempotencyKey),
      ['order-4711', 'order-4711'],
    )
  })

  it('never retries a POST without an Idempotency-Key (maxRetries 0), a PATCH, a DELETE or a 4xx', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [status(503)])
    const off = clientWithoutSleeps(baseUrl, { maxRetries: 0 })
    const on = clientWithoutSleeps(baseUrl)

    await assert.rejects(off.client.createLicense({ productId: 'prd_1' }), KeyturnApiError)
    await assert.rejects(on.client.updateLicense('lic_1', { maxActivations: 2 }), KeyturnApiError)
    await assert.rejects(on.client.deleteApiKey('key_1'), KeyturnApiError)

    assert.deepEqual(
      requests.map(({ method, idempotencyKey }) => [method, idempotencyKey]),
      [
        ['POST', undefined],
        ['PATCH', undefined],
        ['DELETE', undefined],
      ],
    )
    assert.deepEqual([...off.waits, ...on.waits], [])

    const notFound = await scriptedServer(t, [status(404), ok])
    const client = clientWithoutSleeps(notFound.baseUrl)
    await assert.rejects(client.client.getLicense('lic_1'), KeyturnApiError)
    assert.equal(notFound.requests.length, 1)
  })

  it('fails an attempt that outlasts timeoutMs as a connection error, then retries it', async (t) => {
    // The first request is never answered. (The timeout leaves room for the answer to the second on a busy machine.)
    const { baseUrl, requests } = await scriptedServer(t, [() => undefined, ok])
    const { client, waits } = clientWithoutSleeps(baseUrl)

    const license = await client.getLicense('lic_1', { timeoutMs: 1000 })
    const silent = await scriptedServer(t, [() => undefined])
    const once = clientWithoutSleeps(silent.baseUrl, { maxRetries: 0, timeoutMs: 50 })

    assert.deepEqual(license, { id: 'lic_1', ok: true })
    assert.equal(requests.length, 2)
    assert.equal(waits.length, 1)
    await assert.rejects(once.client.getLicense('lic_1'), (error: unknown) => {
      assert.ok(error instanceof KeyturnConnectionError)
      assert.match(error.message, /within 50 ms/)
      return true
    })
  })

  it('stops at once when the signal aborts, with the signal reason, retries included', async (t) => {
    const { baseUrl, requests } = await scriptedServer(t, [status(503)])
    const controller = new AbortController()
    const reason = new Error('the user went away')
    const client = new KeyturnClient({
      baseUrl,
      apiKey: testAdminSecret,
      sleep: async () => controller.abort(reason), // aborted while waiting for the first retry
    })

    await assert.rejects(client.getLicense('lic_1', { signal: controller.signal }), reason)
    await assert.rejects(client.getLicense('lic_1', { signal: controller.signal }), reason)

    assert.equal(requests.length, 1, 'an aborted signal sends nothing more')
  })
})

describeEachDatabase('KeyturnClient retries against Keyturn', (database) => {
  it('creates one license when the answer to the first POST is lost: the retry is replayed', async (t) => {
    const keyturn = await startTestServer(t, database)
    let forwarded = 0
    // A proxy that forwards every request, and loses the answer of the first one after Keyturn ran it.
    const proxy = await serveHttp(t, (request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', async () => {
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter(
            ([name]) => !['host', 'connection', 'content-length'].includes(name),
          ),
        ) as Record<string, string>
        const answer = await fetch(`${keyturn.baseUrl}${request.url}`, {
          method: request.method ?? 'GET',
          headers,
          ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
        })
        const body = await answer.text()
        forwarded++
        if (forwarded === 1) {
          request.socket.destroy()
          return
        }
        response.writeHead(answer.status, {
          'content-type': answer.headers.get('content-type') ?? 'application/json',
          'idempotent-replayed': answer.headers.get('idempotent-replayed') ?? 'false',
        })
        response.end(body)
      })
    })
    const { client, waits } = clientWithoutSleeps(proxy)

    const license = await client.createLicense({ productId: keyturn.productId })

    const all = await new KeyturnClient({ baseUrl: keyturn.baseUrl, apiKey: testAdminSecret }).listLicenses()
    assert.equal(forwarded, 2)
    assert.equal(waits.length, 1)
    assert.equal(all.totalCount, 1, 'the retry did not create a second license')
    assert.equal(all.data[0]?.id, license.id)
  })
})
