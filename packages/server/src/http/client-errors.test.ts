import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { it } from 'node:test'
import type { Problem } from '@keyturn/protocol'
import { sqliteTestDatabase } from '../testing/each-database.js'
import { startTestServer } from '../testing/listening-app.js'

interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** Sends `request` as raw bytes and reads the answer until the server closes the connection. */
async function sendRaw(baseUrl: string, request: string | Buffer): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl)
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request))
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
  const [head = '', body = ''] = text.split('\r\n\r\n', 2)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  )
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

function assertRawProblem(res: RawResponse, status: number, code: string): Problem {
  assert.equal(res.status, status, res.body)
  assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, res.body)
  const problem: Problem = JSON.parse(res.body)
  assert.equal(problem.code, code, res.body)
  assert.equal(problem.status, status, res.body)
  assert.match(res.headers['request-id'] ?? '', /^req_[0-9A-Za-z]{22}$/)
  assert.equal(problem.requestId, res.headers['request-id'], res.body)
  assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body))
  return problem
}

// The HTTP parser runs before any database is touched: one engine, and one server for all cases.
it('answers problem details with a Request-Id for requests the HTTP parser refuses', async (t) => {
  const { baseUrl } = await startTestServer(t, sqliteTestDatabase())

  await t.test('answers 431 headers_too_large when the headers exceed 16 KiB', async () => {
    const res = await sendRaw(
      baseUrl,
      `GET /api/v0/licenses HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    )

    assertRawProblem(res, 431, 'headers_too_large')
  })

  await t.test('answers 400 bad_request when Content-Length comes with Transfer-Encoding', async () => {
    const res = await sendRaw(
      baseUrl,
      'POST /api/v0/licenses HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    )

    const problem = assertRawProblem(res, 400, 'bad_request')
    assert.match(problem.detail, /Content-Length and Transfer-Encoding/)
  })

  await t.test('answers 400 bad_request when the path holds a NUL byte', async () => {
    const res = await sendRaw(baseUrl, 'GET /api/v0/lic\u0000enses HTTP/1.1\r\nHost: localhost\r\n\r\n')

    assertRawProblem(res, 400, 'bad_request')
  })

  await t.test('answers 400 bad_request when the method is unknown', async () => {
    const res = await sendRaw(baseUrl, 'FROB /api/v0/licenses HTTP/1.1\r\nHost: localhost\r\n\r\n')

    const problem = assertRawProblem(res, 400, 'bad_request')
    assert.match(problem.detail, /not an HTTP method/)
  })

  await t.test('answers 400 bad_request when an HTTP/1.1 request has no Host header', async () => {
    const res = await sendRaw(baseUrl, 'GET /api/v0/licenses HTTP/1.1\r\nConnection: close\r\n\r\n')

    const problem = assertRawProblem(res, 400, 'bad_request')
    assert.match(problem.detail, /Host header/)
  })

  await t.test('answers 400 bad_request when the bytes are not HTTP at all', async () => {
    const res = await sendRaw(
      baseUrl,
      '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003\r\n\r\n',
    )

    assertRawProblem(res, 400, 'bad_request')
  })

  await t.test('answers 400 bad_request when a request has two Host headers', async () => {
    const res = await sendRaw(
      baseUrl,
      'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n',
    )

    const problem = assertRawProblem(res, 400, 'bad_request')
    assert.match(problem.detail, /exactly one Host header/)
  })

  await t.test(
    'answers 400 bad_request when a request has two Authorization or Content-Type headers',
    async () => {
      for (const field of [
        'Authorization: Bearer a\r\nAuthorization: Bearer b',
        'Content-Type: application/json\r\nContent-Type: text/plain',
      ]) {
        const res = await sendRaw(
          baseUrl,
          `POST /api/v0/products HTTP/1.1\r\nHost: a\r\n${field}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
        )

        const problem = assertRawProblem(res, 400, 'bad_request')
        assert.match(problem.detail, /more than one (authorization|content-type) header/)
      }
    },
  )

  await t.test('answers 400 bad_request when the method is CONNECT', async () => {
    const res = await sendRaw(baseUrl, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')

    const problem = assertRawProblem(res, 400, 'bad_request')
    assert.match(problem.detail, /not a proxy/)
  })

  await t.test('answers 415 unsupported_media_type when the body is compressed', async () => {
    const res = await sendRaw(
      baseUrl,
      'POST /api/v0/products HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    )

    assertRawProblem(res, 415, 'unsupported_media_type')
  })

  await t.test('answers 417 expectation_failed when Expect is not 100-continue', async () => {
    const res = await sendRaw(
      baseUrl,
      'POST /api/v0/products HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    )

    const problem = assertRawProblem(res, 417, 'expectation_failed')
    assert.match(problem.detail, /100-continue/)
  })

  await t.test('still answers a request with Expect: 100-continue', async () => {
    const res = await sendRaw(
      baseUrl,
      'GET /healthz HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
    )

    assert.match(res.body, /HTTP\/1\.1 200 OK/, 'the answer after "100 Continue"')
  })

  await t.test('still answers a well-formed request on a raw socket', async () => {
    const res = await sendRaw(
      baseUrl,
      'GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    )

    assert.equal(res.status, 200, res.body)
    assert.match(res.headers['request-id'] ?? '', /^req_/)
  })
})

it('answers 408 request_timeout when the headers or the body stop arriving', async (t) => {
  const { baseUrl, headers } = await startTestServer(t, sqliteTestDatabase(), {
    httpTimeouts: { requestMs: 300, checkIntervalMs: 50 },
  })
  const stalled = {
    'headers that never end': 'GET /api/v0/licenses HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n',
    // Authenticated, so the route waits for the body (a request without a key is answered 401 at once).
    'a body that never comes': `POST /api/v0/products HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${headers.authorization}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"na`,
  }

  for (const [name, request] of Object.entries(stalled)) {
    const problem = assertRawProblem(await sendRaw(baseUrl, request), 408, 'request_timeout')
    assert.match(problem.detail, /not received in time/, name)
  }
})
