import type { FastifyReply, FastifyRequest, onErrorHookHandler, onRequestAsyncHookHandler } from 'fastify'
import type { ApiKeyService } from '../api-keys/api-key-service.js'
import { DomainError } from '../core/errors.js'
import { apiKeyNotValid } from '../core/principal.js'
import { describeOperatorRole, operatorMay, requiredOperatorRole } from '../operators/operator-permissions.js'
import type { OperatorService } from '../operators/operator-service.js'
import { csrfHeader } from '../sessions/session.js'
import type { App } from './app-types.js'
import { problemFor, sendProblem } from './error-handler.js'
import { readSessionCookie } from './session-cookie.js'

const bearer = /^Bearer +(\S+) *$/i

/** The prefix the API's routes are registered under (`/v0/…` is rewritten to it). */
const apiPrefix = '/api/v0'

/** Methods that change nothing: a signed-in operator sends them without the CSRF header. */
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS'])

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Only signed-in operators may call the route (operator accounts): API keys get 403. */
    operatorsOnly?: boolean
  }
}

/**
 * The onRequest hook of every API route: who is calling, or a 401. The caller is one of:
 * - an API key, `Authorization: Bearer <secret>`;
 * - a signed-in operator, by the operator session cookie (never the customer portal's), with the
 *   session's CSRF token in the `X-Keyturn-Csrf` header on every write (403 without it); what the
 *   operator's role allows is decided here too, from one table (operators/operator-permissions.ts).
 * Both at once is a 400: a request says who it is once.
 *
 * `beforeRefusing` may answer instead (429 when the caller's address is over its budget) and
 * returns false when it did. A route with `config.confirmsApiKey` confirms the key in its own
 * statement: for it, a key this process has read before is taken as read then (ApiKeyService
 * `authenticate` with `recall`), and the route answers 401 itself if the key is gone. Until the
 * route runs, the hooks between may only refuse such a request (a 429 of the rate limits), never
 * answer it with data; an Idempotency-Key's claim refers to the key, so it too refuses a gone one.
 */
export function authenticate(
  apiKeys: ApiKeyService,
  operators: OperatorService,
  beforeRefusing?: (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>,
): onRequestAsyncHookHandler {
  const settings = operators.sessionSettings()
  const refuse = async (request: FastifyRequest, reply: FastifyReply, detail: string) => {
    if (beforeRefusing !== undefined && !(await beforeRefusing(request, reply))) {
      return
    }
    await sendProblem(reply, problemFor('unauthenticated', detail, request.id))
  }
  return async (request, reply) => {
    const header = request.headers.authorization
    const cookie = readSessionCookie(settings, request.headers.cookie)
    if (header !== undefined && cookie !== undefined) {
      await sendProblem(
        reply,
        problemFor(
          'bad_request',
          'The request carries both an Authorization header and the operator session cookie: send one of them.',
          request.id,
        ),
      )
      return
    }
    if (cookie !== undefined) {
      await authenticateOperator(request, reply, cookie)
      return
    }
    const secret = header === undefined ? undefined : bearer.exec(header)?.[1]
    const principal =
      secret === undefined
        ? undefined
        : await apiKeys.authenticate(secret, {
            recall: request.routeOptions.config.confirmsApiKey === true,
            connection: request.raw.socket,
          })
    if (principal === undefined) {
      await refuse(
        request,
        reply,
        header === undefined
          ? 'Send the header Authorization: Bearer <API key>.'
          : secret === undefined
            ? 'The Authorization header must read Bearer <API key>.'
            : apiKeyNotValid,
      )
      return
    }
    if (request.routeOptions.config.operatorsOnly === true) {
      await sendProblem(
        reply,
        problemFor(
          'forbidden',
          'Operator accounts are managed by an owner signed in to the dashboard (or with keyturn operators on the server), not with an API key.',
          request.id,
        ),
      )
      return
    }
    request.principal = { ...principal, requestId: request.id }
  }

  async function authenticateOperator(request: FastifyRequest, reply: FastifyReply, cookie: string) {
    const who = await operators.authenticate(cookie)
    if (who === undefined) {
      await refuse(
        request,
        reply,
        'The operator session has ended (signed out, expired or revoked): sign in again.',
      )
      return
    }
    if (!safeMethods.has(request.method)) {
      const csrf = request.headers[csrfHeader]
      if (!(await operators.csrfMatches(cookie, typeof csrf === 'string' ? csrf : undefined))) {
        await sendProblem(
          reply,
          problemFor(
            'forbidden',
            'A signed-in operator’s write needs the session’s CSRF token in the X-Keyturn-Csrf header.',
            request.id,
          ),
        )
        return
      }
    }
    const required = requiredRoleOf(request)
    if (!operatorMay(who.operator.role, required)) {
      await sendProblem(
        reply,
        problemFor(
          'forbidden',
          `The ${who.operator.role} role may not do this. ${describeOperatorRole(required)}`,
          request.id,
        ),
      )
      return
    }
    request.principal = {
      role: 'admin',
      operator: { id: who.operator.id, role: who.operator.role },
      requestId: request.id,
    }
  }
}

function requiredRoleOf(request: FastifyRequest) {
  const path = request.routeOptions.url?.slice(apiPrefix.length) ?? ''
  return requiredOperatorRole(request.method === 'HEAD' ? 'GET' : request.method, path) ?? 'owner'
}

/**
 * Every API route must state what it needs of an operator (operators/operator-permissions.ts);
 * its OpenAPI description says so. Called in the API's scope before its routes.
 */
export function stateOperatorRoles(api: App): void {
  api.addHook('onRoute', (route) => {
    const path = route.url.startsWith(apiPrefix) ? route.url.slice(apiPrefix.length) : route.url
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') {
        continue
      }
      const required = requiredOperatorRole(method, path)
      if (required === undefined) {
        throw new Error(
          `${method} ${path} states no operator role: add it to requiredOperatorRoles (packages/server/src/operators/operator-permissions.ts).`,
        )
      }
      const description = route.schema?.description
      route.schema = {
        ...route.schema,
        description: `${description === undefined ? '' : `${description}\n\n`}${describeOperatorRole(required)}`,
      }
    }
  })
}

/**
 * The onError hook beside `authenticate`: a 401 from a route means the key its request recalled is
 * gone, so this process reads that key afresh next time (and refuses it there, within the address
 * budget of unauthenticated requests).
 */
export function forgetGoneKeys(apiKeys: ApiKeyService): onErrorHookHandler {
  return (request, _reply, error, done) => {
    if (
      error instanceof DomainError &&
      error.code === 'unauthenticated' &&
      request.principal?.apiKeyId !== undefined
    ) {
      apiKeys.forget(request.principal.apiKeyId)
    }
    done()
  }
}
