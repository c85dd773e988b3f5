import type { FastifyReply, FastifyRequest, onErrorHookHandler, onRequestAsyncHookHandler } from 'fastify'
import type { ApiKeyService } from '../api-keys/api-key-service.js'
import { DomainError } from '../core/errors.js'
import { apiKeyNotValid } from '../core/principal.js'
import { problemFor, sendProblem } from './error-handler.js'

const bearer = /^Bearer +(\S+) *$/i

/**
 * The onRequest hook of every API route: resolves the bearer secret to a principal, or answers 401.
 * `beforeRefusing` may answer instead (429 when the caller's address is over its budget) and
 * returns false when it did. A route with `config.confirmsApiKey` confirms the key in its own
 * statement: for it, a key this process has read before is taken as read then (ApiKeyService
 * `authenticate` with `recall`), and the route answers 401 itself if the key is gone. Until the
 * route runs, the hooks between may only refuse such a request (a 429 of the rate limits), never
 * answer it with data; an Idempotency-Key's claim refers to the key, so it too refuses a gone one.
 */
export function authenticate(
  apiKeys: ApiKeyService,
  beforeRefusing?: (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>,
): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const header = request.headers.authorization
    const secret = header === undefined ? undefined : bearer.exec(header)?.[1]
    const principal =
      secret === undefined
        ? undefined
        : await apiKeys.authenticate(secret, { recall: request.routeOptions.config.confirmsApiKey === true })
    if (principal === undefined) {
      if (beforeRefusing !== undefined && !(await beforeRefusing(request, reply))) {
        return
      }
      const detail =
        header === undefined
          ? 'Send the header Authorization: Bearer <API key>.'
          : secret === undefined
            ? 'The Authorization header must read Bearer <API key>.'
            : apiKeyNotValid
      await sendProblem(reply, problemFor('unauthenticated', detail, request.id))
      return
    }
    request.principal = { ...principal, requestId: request.id }
  }
}

/**
 * The onError hook beside `authenticate`: a 401 from a route means the key its request recalled is
 * gone, so this process reads that key afresh next time (and refuses it there, within the address
 * budget of unauthenticated requests).
 */
export function forgetGoneKeys(apiKeys: ApiKeyService): onErrorHookHandler {
  return (request, _reply, error, done) => {
    if (error instanceof DomainError && error.code === 'unauthenticated' && request.principal != null) {
      apiKeys.forget(request.principal.apiKeyId)
    }
    done()
  }
}
