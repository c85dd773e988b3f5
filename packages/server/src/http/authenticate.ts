import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import type { ApiKeyService } from '../api-keys/api-key-service.js'
import { problemFor, sendProblem } from './error-handler.js'

const bearer = /^Bearer +(\S+) *$/i

/**
 * The onRequest hook of every API route: resolves the bearer secret to a principal, or answers 401.
 * `beforeRefusing` may answer instead (429 when the caller's address is over its budget) and
 * returns false when it did.
 */
export function authenticate(
  apiKeys: ApiKeyService,
  beforeRefusing?: (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>,
): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const header = request.headers.authorization
    const secret = header === undefined ? undefined : bearer.exec(header)?.[1]
    const principal = secret === undefined ? undefined : await apiKeys.authenticate(secret)
    if (principal === undefined) {
      if (beforeRefusing !== undefined && !(await beforeRefusing(request, reply))) {
        return
      }
      const detail =
        header === undefined
          ? 'Send the header Authorization: Bearer <API key>.'
          : secret === undefined
            ? 'The Authorization header must read Bearer <API key>.'
            : 'The API key is not valid; it may have been deleted.'
      reply.header('WWW-Authenticate', 'Bearer')
      await sendProblem(reply, problemFor('unauthenticated', detail, request.id))
      return
    }
    request.principal = { ...principal, requestId: request.id }
  }
}
