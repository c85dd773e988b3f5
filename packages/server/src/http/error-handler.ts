import { type ErrorCode, type FieldError, type Problem, problemType } from '@keyturn/protocol'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { DomainError } from '../core/errors.js'
import { databaseFaultOf } from '../storage/database-faults.js'
import { maxFieldErrors, toFieldErrors } from './field-errors.js'
import { problemByCode } from './problems.js'
import type { RouteMethods } from './route-methods.js'
import { unstorableValueKeyword, type ValueIssue } from './validation.js'

interface Described {
  code: ErrorCode
  detail: string
  errors?: FieldError[] | undefined
  extensions?: Record<string, unknown> | undefined
}

/** The start of a validation problem's detail, by the part of the request that failed. */
function subjectOf(context: string | undefined): string {
  switch (context) {
    case 'body':
      return 'The body does'
    case 'querystring':
      return 'The query parameters do'
    case 'params':
      return 'The path parameters do'
    case 'headers':
      return 'The headers do'
    default:
      return 'The request does'
  }
}

function describe(error: FastifyError | Error, contentType: string | undefined): Described {
  if (error instanceof DomainError) {
    return {
      code: error.code,
      detail: error.message,
      errors: error.fieldErrors,
      extensions: error.extensions,
    }
  }
  if ('validation' in error && error.validation) {
    const notFound = notFoundId(error.validation, error.validationContext)
    if (notFound !== undefined) {
      return notFound
    }
    const all = toFieldErrors(error.validation, error.validationContext)
    const errors = all.slice(0, maxFieldErrors)
    const more = all.length > errors.length ? `; and ${all.length - errors.length} more` : ''
    return {
      code: 'validation_failed',
      detail: `${subjectOf(error.validationContext)} not match the schema: ${errors.map((e) => e.detail).join('; ')}${more}.`,
      errors,
    }
  }
  if ('code' in error && error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    // `curl -d` sends application/x-www-form-urlencoded: say which type the API reads.
    const sent =
      contentType === undefined ? '' : ` (this request sent ${JSON.stringify(contentType.slice(0, 100))})`
    return {
      code: 'unsupported_media_type',
      detail: `The body must be JSON, sent with the header Content-Type: application/json${sent}.`,
    }
  }
  if ('statusCode' in error && error.statusCode !== undefined && error.statusCode < 500) {
    const code: ErrorCode =
      error.statusCode === 413
        ? 'payload_too_large'
        : error.statusCode === 415
          ? 'unsupported_media_type'
          : 'bad_request'
    return { code, detail: error.message }
  }
  const fault = databaseFaultOf(error)
  if (fault === 'database_unavailable') {
    return { code: fault, detail: 'The database did not answer in time; retry shortly.' }
  }
  if (fault === 'storage_full') {
    return { code: fault, detail: 'The database has no room left for this write; retry later.' }
  }
  // Never echo an unexpected error's message: it may contain SQL, paths or secrets.
  return { code: 'internal_error', detail: 'The server could not complete the request.' }
}

/** The not-found code of an id, by its prefix (core/ids.ts); an id of another kind is no route. */
const notFoundByIdPrefix: Record<string, ErrorCode> = {
  prd_: 'product_not_found',
  lic_: 'license_not_found',
  act_: 'activation_not_found',
  key_: 'api_key_not_found',
  cus_: 'customer_not_found',
  pol_: 'policy_not_found',
  ent_: 'entitlement_not_found',
}

/**
 * A path id holding U+0000 names nothing that can exist: 404, as for any unknown id, and on both
 * engines (PostgreSQL cannot even compare such text).
 */
function notFoundId(issues: readonly ValueIssue[], context: string | undefined): Described | undefined {
  const id = issues[0]?.data
  if (
    context !== 'params' ||
    typeof id !== 'string' ||
    !issues.every((issue) => issue.keyword === unstorableValueKeyword)
  ) {
    return undefined
  }
  const code = notFoundByIdPrefix[id.slice(0, 4)] ?? 'route_not_found'
  return { code, detail: `Nothing has the id ${JSON.stringify(id)}: ids never contain U+0000 (NUL).` }
}

export function problemFor(code: ErrorCode, detail: string, requestId: string): Problem {
  const { status, title } = problemByCode[code]
  return { type: problemType(code), title, status, detail, code, requestId }
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  if (problem.code === 'unauthenticated') {
    reply.header('WWW-Authenticate', 'Bearer') // RFC 6750: the scheme a 401 asks for
  }
  return reply.code(problem.status).type('application/problem+json').send(problem)
}

/** What a 503 for a database fault asks a client to wait before it retries. */
export const databaseRetryAfterSeconds = 2

export function handleError(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const { code, detail, errors, extensions } = describe(error, request.headers['content-type'])
  const problem: Problem = {
    ...extensions,
    ...problemFor(code, detail, request.id),
    ...(errors ? { errors } : {}),
  }
  if (problem.status === 503) {
    // The outage is logged once by the connection (storage/connect.ts), not with every request.
    reply.header('Retry-After', String(databaseRetryAfterSeconds))
  } else if (typeof extensions?.retryAfter === 'number') {
    reply.header('Retry-After', String(extensions.retryAfter))
  } else if (problem.status >= 500) {
    request.log.error({ err: error }, 'request failed')
  }
  return sendProblem(reply, problem)
}

/** A 404 `route_not_found` for the request's method and path. */
export function handleNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const detail = `No route ${request.method} ${request.originalUrl.split('?')[0]}.`
  return sendProblem(reply, problemFor('route_not_found', detail, request.id))
}

/**
 * Fastify's not-found handler: a path no route has is a 404 `route_not_found`; a known path asked
 * with another method is a 405 `method_not_allowed` whose `Allow` header lists the path's methods.
 */
export function notFoundHandler(routes: RouteMethods) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    // Looked up as routed (`/v0/…` is rewritten to `/api/v0/…`), named as sent.
    const allowed = routes.allowed(request.url.split('?')[0] ?? request.url)
    const path = request.originalUrl.split('?')[0] ?? request.originalUrl
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '))
      const detail = `${path} does not answer ${request.method}; it answers ${allowed.join(', ')}.`
      return sendProblem(reply, problemFor('method_not_allowed', detail, request.id))
    }
    return sendProblem(
      reply,
      problemFor('route_not_found', `No route ${request.method} ${path}.`, request.id),
    )
  }
}

/**
 * Fastify's `frameworkErrors`: a URL its router cannot read (bad percent-encoding, a path parameter
 * over its length limit) is refused before any hook runs, so the Request-Id header is set here.
 */
export function handleFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  reply.header('Request-Id', request.id)
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendProblem(reply, problemFor('bad_request', 'A path parameter is too long.', request.id))
    return
  }
  void handleError(error, request, reply)
}
