/**
 * @module Answers for requests Node's HTTP parser refuses before Fastify sees them (headers over
 * 16 KiB, Content-Length with Transfer-Encoding, an unknown method, a malformed request line, a
 * request that never finished) and for an HTTP/1.1 request without Host: problem details with a
 * Request-Id, like every other answer.
 */
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ErrorCode, Problem } from '@keyturn/protocol'
import type {
  ConnectionError,
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
} from 'fastify'
import { newId } from '../core/ids.js'
import { problemFor, sendProblem } from './error-handler.js'

/** What each parser error means to a client; anything else is a request that is not HTTP/1.1. */
function describe(error: ConnectionError): { code: ErrorCode; detail: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'headers_too_large', detail: 'The request line and headers exceed 16 KiB.' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', detail: 'The request was not received in time.' }
    case 'HPE_INVALID_METHOD':
      return { code: 'bad_request', detail: 'The request method is not an HTTP method.' }
    case 'HPE_INVALID_URL':
      return { code: 'bad_request', detail: 'The request target is not a valid path.' }
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return {
        code: 'bad_request',
        detail:
          'The request has both Content-Length and Transfer-Encoding, or a Transfer-Encoding other than chunked last.',
      }
    default:
      return { code: 'bad_request', detail: 'The request is not valid HTTP/1.1.' }
  }
}

/**
 * Fastify's `clientErrorHandler` (called with the Fastify instance as `this`). The answer is
 * written to the socket as it stands, since no request object exists; then the connection closes,
 * as the parser cannot find where the next request would start.
 */
export function handleClientError(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  // A reset connection has nobody left to answer (Node's documentation on 'clientError').
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const { code, detail } = describe(error)
  const requestId = newId('request')
  this.log.debug({ err: error, requestId, code }, 'refused a request the HTTP parser could not read')
  answerOnSocket(socket, problemFor(code, detail, requestId))
}

/**
 * Node hands a CONNECT request to the server's 'connect' listeners and, with none, closes the
 * connection without a word. Keyturn is no proxy: answer as for any request it cannot serve.
 */
export function refuseConnect(server: Server, log: FastifyBaseLogger): void {
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    const requestId = newId('request')
    log.debug({ requestId }, 'refused a CONNECT request')
    answerOnSocket(
      socket,
      problemFor('bad_request', 'CONNECT is not served: Keyturn is not a proxy.', requestId),
    )
  })
}

/**
 * Node answers a request whose `Expect` is anything but `100-continue` with a bare 417 of its own
 * (no body, no Request-Id) unless the server has a 'checkExpectation' listener. This one hands the
 * request to Fastify like any other, where `refuseUnreadableRequests` answers the 417 as a problem.
 */
export function serveAllExpectations(server: Server): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    server.emit('request', request, response)
  })
}

/** Writes `problem` as a whole HTTP/1.1 response on a socket no request object owns, then closes it. */
function answerOnSocket(socket: Socket, problem: Problem): void {
  const requestId = problem.requestId
  const body = JSON.stringify(problem)
  socket.end(
    [
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? ''}`,
      'Content-Type: application/problem+json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `Request-Id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
    () => socket.destroy(),
  )
}

/** Fields whose second copy Node drops without a word, that decide who asks and how the body reads. */
const singletonFields = ['authorization', 'content-type'] as const

/**
 * What Node's parser lets through but HTTP does not allow, or Keyturn cannot read, refused before
 * authentication: an HTTP/1.1 request without Host, or with two (RFC 9112 §3.2: a proxy and
 * Keyturn could disagree on which one counts; Node refuses a missing Host with an empty 400 of its
 * own, so the server is created with `requireHostHeader: false`), two Authorization or Content-Type
 * headers (the same ambiguity), an `Expect` other than
 * `100-continue` (417, RFC 9110 §10.1.1; see `serveAllExpectations`), and a compressed body, which
 * Fastify would read as if it were not (RFC 9110 §8.4.1 asks for a 415).
 */
export function refuseUnreadableRequests(
  request: FastifyRequest,
  reply: FastifyReply,
  done: () => void,
): void {
  // One pass over the raw header names, without allocating (this runs on every request).
  const raw = request.raw.rawHeaders
  let hosts = 0
  let authorizations = 0
  let contentTypes = 0
  for (let index = 0; index < raw.length; index += 2) {
    const sent = raw[index] as string
    // Only names of the right length are lowered: no new string for the other headers.
    const name = sent.length === 4 || sent.length === 12 || sent.length === 13 ? sent.toLowerCase() : ''
    if (name === 'host') {
      hosts++
    } else if (name === 'authorization') {
      authorizations++
    } else if (name === 'content-type') {
      contentTypes++
    }
  }
  const counts = { authorization: authorizations, 'content-type': contentTypes }
  const repeated = singletonFields.find((field) => counts[field] > 1)
  if (hosts > 1 || (request.raw.httpVersion === '1.1' && hosts === 0)) {
    const detail = 'An HTTP/1.1 request needs exactly one Host header.'
    sendProblem(reply, problemFor('bad_request', detail, request.id)) // answered: the hook chain stops
    return
  }
  // Node keeps the first of two and drops the other silently; a proxy may have read the other.
  if (repeated !== undefined) {
    const detail = `The request has more than one ${repeated} header; send it once.`
    sendProblem(reply, problemFor('bad_request', detail, request.id))
    return
  }
  const expect = request.headers.expect
  if (expect !== undefined && !/(?:^|\W)100-continue(?:$|\W)/i.test(expect)) {
    // Node's own test for 100-continue (it answers that one itself, before this runs).
    const detail = 'The only expectation the server meets is `Expect: 100-continue`.'
    sendProblem(reply, problemFor('expectation_failed', detail, request.id))
    return
  }
  const encoding = request.headers['content-encoding']
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    const detail = 'A Content-Encoding (a compressed body) is not read; send the body uncompressed.'
    sendProblem(reply, problemFor('unsupported_media_type', detail, request.id))
    return
  }
  done()
}
