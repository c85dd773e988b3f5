import type { FieldError } from '@keyturn/protocol'
import type { FastifySchemaValidationError } from 'fastify'

/** Most field errors one problem lists: a 64 KiB body of unknown fields would otherwise list thousands. */
export const maxFieldErrors = 20

/** An Ajv issue with the members `verbose: true` adds (http/validation.ts sets it). */
interface AjvIssue extends FastifySchemaValidationError {
  readonly parentSchema?: unknown
  readonly data?: unknown
}

/**
 * Ajv issues as RFC 9457 field errors: `#/maxActivations`, with the property for required/additional.
 * A failed `anyOf` (a nullable field) comes with one issue per member; it is reported once, as what
 * the field accepts: "maxActivations must be an integer from 1 to 1000000 or null; got 0".
 */
export function toFieldErrors(issues: readonly AjvIssue[], context: string | undefined): FieldError[] {
  const unions = issues.filter(isUnionIssue).map((issue) => `${issue.schemaPath}/`)
  const seen = new Set<string>()
  const errors: FieldError[] = []
  for (const issue of issues) {
    if (unions.some((union) => issue.schemaPath.startsWith(union))) {
      continue // a member of a failed union, reported by the union's own issue
    }
    const error = toFieldError(issue, context)
    const key = `${error.pointer}|${error.detail}`
    if (!seen.has(key)) {
      seen.add(key)
      errors.push(error)
    }
  }
  return errors
}

function isUnionIssue(issue: AjvIssue): boolean {
  return issue.keyword === 'anyOf' || issue.keyword === 'oneOf'
}

function toFieldError(issue: AjvIssue, context: string | undefined): FieldError {
  const params = issue.params as { missingProperty?: string; additionalProperty?: string } // Ajv's own shape
  const extra = params.missingProperty ?? params.additionalProperty
  const pointer = `#${issue.instancePath}${extra === undefined ? '' : `/${extra}`}`
  const name = pointer.slice(2) || (context ?? 'value')
  if (params.additionalProperty !== undefined) {
    return {
      pointer,
      detail: `unknown ${context === 'body' ? 'field' : 'parameter'} "${params.additionalProperty}"`,
    }
  }
  if (isUnionIssue(issue) && isObject(issue.parentSchema)) {
    return {
      pointer,
      detail: `${name} must be ${describeSchema(issue.parentSchema)}; got ${preview(issue.data)}`,
    }
  }
  return { pointer, detail: `${name} ${issue.message ?? 'is not valid'}` }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** What a schema accepts, in words: "an integer from 1 to 1000000 or null", "a date-time string or null". */
function describeSchema(schema: Record<string, unknown>): string {
  const members = schema.anyOf ?? schema.oneOf
  if (Array.isArray(members)) {
    return members.map((member) => (isObject(member) ? describeSchema(member) : 'a valid value')).join(' or ')
  }
  if (Array.isArray(schema.enum)) {
    return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(', ')}`
  }
  if (schema.type === 'null') {
    return 'null'
  }
  const type = typeof schema.type === 'string' ? schema.type : 'value'
  const format = typeof schema.format === 'string' ? `${schema.format} ` : ''
  const min = typeof schema.minimum === 'number' ? ` from ${schema.minimum}` : ''
  const max = typeof schema.maximum === 'number' ? ` to ${schema.maximum}` : ''
  const phrase = `${format}${type}${min}${max}`
  return `${/^[aeiou]/.test(phrase) ? 'an' : 'a'} ${phrase}`
}

/** A value as sent, cut short: the problem names it without echoing a whole body. */
function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? 'nothing'
  return text.length > 40 ? `${text.slice(0, 40)}…` : text
}
