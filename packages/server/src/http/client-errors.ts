/**
 * @module Answers for requests Node's HTTP parser refuses before Fastify sees them (headers over
 * 16 KiB, Content-Length with Transfer-Encoding, an unknown method, a malformed request line, a
 * request that never finished) and for an HTTP/1.1 request without Host: problem details with a
 * Request-Id, like every other answer.
 */
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { ErrorCode } from '@keyturn/protocol'
import type { ConnectionError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
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
  const problem = problemFor(code, detail, requestId)
  this.log.debug({ err: error, requestId, code }, 'refused a request the HTTP parser could not read')
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

/**
 * HTTP/1.1 requires a Host header (RFC 9112 §3.2). Node refuses a request without one with an
 * empty 400 of its own, so the server is created with `requireHostHeader: false` and this hook
 * refuses it instead.
 */
export async function requireHostHeader(
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply | undefined> {
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
    return sendProblem(
      reply,
      problemFor('bad_request', 'An HTTP/1.1 request needs a Host header.', request.id),
    )
  }
  return undefined
}
