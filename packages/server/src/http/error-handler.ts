import { type ErrorCode, type FieldError, type Problem, problemType } from '@keyturn/protocol'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { DomainError } from '../core/errors.js'
import { problemByCode } from './problems.js'

interface Described {
  code: ErrorCode
  detail: string
  errors?: FieldError[] | undefined
  extensions?: Record<string, unknown> | undefined
}

type AjvIssue = NonNullable<FastifyError['validation']>[number]

/** Ajv issues as RFC 9457 field errors: `#/maxActivations`, with the property for required/additional. */
export function toFieldErrors(issues: readonly AjvIssue[], context: string | undefined): FieldError[] {
  const seen = new Set<string>()
  const errors: FieldError[] = []
  for (const issue of issues) {
    const params = issue.params as { missingProperty?: string; additionalProperty?: string } // Ajv's own shape
    const extra = params.missingProperty ?? params.additionalProperty
    const pointer = `#${issue.instancePath}${extra === undefined ? '' : `/${extra}`}`
    const detail =
      params.additionalProperty !== undefined
        ? `unknown ${context === 'body' ? 'field' : 'parameter'} "${params.additionalProperty}"`
        : `${pointer.slice(2) || (context ?? 'value')} ${issue.message ?? 'is not valid'}`
    const key = `${pointer}|${detail}`
    if (!seen.has(key)) {
      seen.add(key)
      errors.push({ pointer, detail })
    }
  }
  return errors
}

function describe(error: FastifyError | Error): Described {
  if (error instanceof DomainError) {
    return {
      code: error.code,
      detail: error.message,
      errors: error.fieldErrors,
      extensions: error.extensions,
    }
  }
  if ('validation' in error && error.validation) {
    const errors = toFieldErrors(error.validation, error.validationContext)
    const where =
      error.validationContext === 'querystring' ? 'query parameters' : (error.validationContext ?? 'request')
    return {
      code: 'validation_failed',
      detail: `The ${where} do not match the schema: ${errors.map((e) => e.detail).join('; ')}.`,
      errors,
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
  // Never echo an unexpected error's message: it may contain SQL, paths or secrets.
  return { code: 'internal_error', detail: 'The server could not complete the request.' }
}

export function problemFor(code: ErrorCode, detail: string, requestId: string): Problem {
  const { status, title } = problemByCode[code]
  return { type: problemType(code), title, status, detail, code, requestId }
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).type('application/problem+json').send(problem)
}

export function handleError(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const { code, detail, errors, extensions } = describe(error)
  const problem: Problem = {
    ...extensions,
    ...problemFor(code, detail, request.id),
    ...(errors ? { errors } : {}),
  }
  if (problem.status >= 500) {
    request.log.error({ err: error }, 'request failed')
  }
  return sendProblem(reply, problem)
}

export function handleNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(
    reply,
    problemFor('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`, request.id),
  )
}
