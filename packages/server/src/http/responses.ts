import { type ErrorCode, ProblemSchema } from '@keyturn/protocol'
import type { TSchema } from 'typebox'
import type { App } from './app-types.js'
import { problemByCode } from './problems.js'

/** The codes each problem response schema stands for: the OpenAPI document shows one example per code. */
const codesBySchema = new WeakMap<object, readonly ErrorCode[]>()

export function problemCodesOf(schema: object): readonly ErrorCode[] | undefined {
  return codesBySchema.get(schema)
}

/**
 * The problem responses made so far, by their codes: every app (the tests build thousands) gets the
 * same schema object for the same codes, which the compiled-schema cache (schema-compilers.ts)
 * recognises by identity instead of writing it out as JSON again. Schemas are never changed once made.
 */
const responsesByCodes = new Map<string, TSchema>()

/** One problem response for `codes`, all of one status. */
export function problemResponse(codes: readonly ErrorCode[]): TSchema {
  const key = codes.join(' ')
  const made = responsesByCodes.get(key)
  if (made !== undefined) {
    return made
  }
  const response = {
    ...ProblemSchema,
    description: `Problem details with \`code\` ${codes.map((code) => `\`${code}\``).join(' or ')}`,
  }
  codesBySchema.set(response, codes)
  responsesByCodes.set(key, response)
  return response
}

/**
 * The problem responses of an operation, for its route schema: every authenticated route can
 * answer 400 `validation_failed` and 401; each route adds the codes its service throws (`forbidden`
 * wherever a role may not call it). `documentCommonProblems` adds those of the HTTP layer.
 */
export function problemResponses(...codes: ErrorCode[]): Record<number, TSchema> {
  return groupByStatus(['validation_failed', 'unauthenticated', ...codes])
}

function groupByStatus(codes: readonly ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of codes) {
    const { status } = problemByCode[code]
    const shared = byStatus.get(status) ?? []
    if (!shared.includes(code)) {
      byStatus.set(status, [...shared, code])
    }
  }
  return Object.fromEntries([...byStatus].map(([status, shared]) => [status, problemResponse(shared)]))
}

/**
 * Adds `codes` to a route schema's responses, merging with a status it already lists. For hooks
 * that give every route of a scope a problem (idempotency keys, body limits, rate limits).
 */
export function withProblems(response: unknown, codes: readonly ErrorCode[]): Record<string, unknown> {
  const responses: Record<string, unknown> = isObject(response) ? { ...response } : {}
  for (const code of codes) {
    const status = String(problemByCode[code].status)
    const existing = responses[status]
    const known = isObject(existing) ? (problemCodesOf(existing) ?? []) : []
    responses[status] = known.includes(code) ? existing : problemResponse([...known, code])
  }
  return responses
}

/** Methods whose requests carry a body Fastify parses: 413 past the limit, 415 for a type it does not read. */
const bodyMethods = ['POST', 'PATCH', 'PUT']

/** Documents the problems the HTTP layer gives any route of `api` registered after this call. */
export function documentCommonProblems(api: App): void {
  api.addHook('onRoute', (route) => {
    if ([route.method].flat().some((method) => bodyMethods.includes(method))) {
      route.schema = {
        ...route.schema,
        response: withProblems(route.schema?.response, ['payload_too_large', 'unsupported_media_type']),
      }
    }
  })
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}
