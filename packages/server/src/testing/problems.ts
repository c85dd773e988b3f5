import assert from 'node:assert/strict'
import type { ErrorCode, Problem } from '@keyturn/protocol'
import { problemType } from '@keyturn/protocol'
import type { LightMyRequestResponse } from 'fastify'

/**
 * Asserts that a response is the RFC 9457 problem for `code`: its status, media type, `type`, and
 * the request id in both header and body. Returns the body for further checks.
 */
export function assertProblem(res: LightMyRequestResponse, status: number, code: ErrorCode): Problem {
  assert.equal(res.statusCode, status, res.body)
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/, res.body)
  const problem: Problem = res.json()
  assert.equal(problem.code, code, res.body)
  assert.equal(problem.status, status, res.body)
  assert.equal(problem.type, problemType(code), res.body)
  assert.equal(typeof problem.title, 'string', res.body)
  assert.equal(typeof problem.detail, 'string', res.body)
  assert.match(String(res.headers['request-id']), /^req_[0-9A-Za-z]{22}$/)
  assert.equal(problem.requestId, res.headers['request-id'], res.body)
  return problem
}
