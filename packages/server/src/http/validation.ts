import { Ajv, type Options, type ValidateFunction } from 'ajv'
import ajvFormats from 'ajv-formats'
import type { FastifySchema, FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify'
import { maxFieldErrors } from './field-errors.js'

/** Fastify's own Ajv options (@fastify/ajv-compiler), except where noted. */
const options: Options = {
  useDefaults: true,
  removeAdditional: false, // reject unknown fields, don't strip them
  allErrors: true, // report every problem at once; bodies are bounded by bodyLimit, problems by the handler
  addUsedSchema: false,
  verbose: true, // issues carry the schema and value, so a failed anyOf can say what the field accepts
}

/**
 * The keyword of the issues `checkValues` adds: text no database can store (U+0000, which
 * PostgreSQL refuses in text and jsonb while SQLite keeps it, or an unpaired surrogate, which is
 * not Unicode), or a number that is not finite.
 */
export const unstorableValueKeyword = 'storable'

/**
 * Route-schema validators with two Ajv instances. A JSON body is checked as sent: Fastify's default
 * coerces a wrong type into a valid one (`"name": 123` becomes "123"; for a nullable integer `0`,
 * `false` and `""` become null), so a client's mistake would be stored instead of refused. Query
 * strings, path parameters and headers are text, so they keep coercion (`?limit=10` is 10).
 *
 * Every validator then checks the values themselves (`checkValues`), for every route in one place:
 * the schemas say which fields are text, not which characters the databases take. Except headers
 * (walking every header of every request cost more than validating the body): Node's
 * parser refuses U+0000 in a header with a 400 before Fastify sees it, and reads header bytes as
 * Latin-1, so a header value holds no surrogate at all, and no header holds a number.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<FastifySchema> {
  const addFormats = ajvFormats.default // a CommonJS module: its default export is the plugin
  const body = addFormats(new Ajv({ ...options, coerceTypes: false }))
  const text = addFormats(new Ajv({ ...options, coerceTypes: 'array' }))
  return ({ schema, httpPart }) =>
    httpPart === 'body'
      ? withValueChecks(body.compile(schema))
      : httpPart === 'headers' && decimalNumbersOf(schema) === undefined
        ? text.compile(schema) // see above: no header value can hold what checkValues looks for
        : withValueChecks(text.compile(schema), decimalNumbersOf(schema))
}

/**
 * Text (query, path, headers) must write a number in decimal: Ajv coerces with JavaScript's
 * `Number`, so `limit=0x10` was 16, `page=0b1` 1, `page=1e-400` and `page=%20` 0. Checked before
 * coercion, per numeric property of the part's schema (`page`, `limit`).
 */
function decimalNumbersOf(schema: unknown): ((data: unknown) => ValueIssue[]) | undefined {
  const properties = isRecord(schema) && isRecord(schema.properties) ? schema.properties : {}
  const numeric = Object.entries(properties).flatMap(([name, property]) =>
    isRecord(property) && (property.type === 'integer' || property.type === 'number')
      ? [{ name, syntax: property.type === 'integer' ? decimalInteger : decimalNumber }]
      : [],
  )
  if (numeric.length === 0) {
    return undefined
  }
  return (data) => {
    if (!isRecord(data)) {
      return []
    }
    return numeric.flatMap(({ name, syntax }) => {
      const values = ([] as unknown[]).concat(data[name])
      const bad = values.find((value) => typeof value === 'string' && !syntax.test(value))
      return bad === undefined
        ? []
        : [
            {
              ...issue(`/${name}`, 'must be a finite number written in decimal digits', bad),
              keyword: 'type',
            },
          ]
    })
  }
}

const decimalInteger = /^-?\d+$/
const decimalNumber = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

type Validator = ValidateFunction & { errors?: FastifySchemaValidationError[] | null }

/**
 * Runs `before` (checks of the text as sent, before Ajv coerces it), `validate`, then `checkValues`
 * on what it accepted. The wrapper keeps Ajv's `schemaEnv`:
 * Fastify passes the parent object only to functions that have it, and Ajv needs it to coerce or
 * fill a default at the root.
 */
function withValueChecks(validate: ValidateFunction, before?: (data: unknown) => ValueIssue[]): Validator {
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const early = before?.(data)
    if (early !== undefined && early.length > 0) {
      checked.errors = early
      return false
    }
    if (!validate(data, context)) {
      checked.errors = validate.errors
      return false
    }
    const issues = checkValues(data)
    checked.errors = issues.length === 0 ? null : issues
    return issues.length === 0
  }) as Validator // the same call signature as Ajv's, plus the members copied below
  checked.schemaEnv = validate.schemaEnv
  checked.schema = validate.schema
  return checked
}

/**
 * Issues, in Ajv's shape, for every string (value or object key) holding U+0000 or an unpaired
 * surrogate and every non-finite number: Ajv coerces `?page=Infinity` and `1e309` to Infinity and
 * then skips `maximum` for it, and JSON.parse reads `1e309` as Infinity too. Iterative: the parser
 * bounds depth, this bounds nothing it does not have to.
 */
export function checkValues(data: unknown): ValueIssue[] {
  const issues: ValueIssue[] = []
  // A path is built only for an issue (this runs on every body): each pending value
  // keeps its parent's entry and its own name or index.
  const pending: Pending[] = [{ value: data, parent: undefined, name: '' }]
  for (let next = pending.pop(); next !== undefined && issues.length < maxFieldErrors; next = pending.pop()) {
    const { value } = next
    if (typeof value === 'string' || typeof value === 'number') {
      const problem = problemOf(value)
      if (problem !== undefined) {
        issues.push(issue(pathOf(next), problem, value))
      }
    } else if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        pending.push({ value: value[index], parent: next, name: String(index) })
      }
    } else if (typeof value === 'object' && value !== null) {
      for (const key of Object.keys(value)) {
        const item: Pending = { value: (value as Record<string, unknown>)[key], parent: next, name: key }
        const problem = problemOf(key)
        if (problem !== undefined) {
          issues.push(issue(pathOf(item), `name ${problem}`, key))
        }
        pending.push(item)
      }
    }
  }
  return issues
}

interface Pending {
  readonly value: unknown
  readonly parent: Pending | undefined
  /** The property name or array index (as text) under the parent. */
  readonly name: string
}

/** The JSON Pointer of a pending value (`/a/0/b`; `~` and `/` in names escaped). */
function pathOf(entry: Pending): string {
  let path = ''
  for (let at: Pending | undefined = entry; at?.parent !== undefined; at = at.parent) {
    path = `/${at.name.replaceAll('~', '~0').replaceAll('/', '~1')}${path}`
  }
  return path
}

const unpairedSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function problemOf(value: string | number): string | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) ? undefined : 'must be a finite number'
  }
  if (value.includes('\u0000')) {
    return 'must not contain U+0000 (NUL)'
  }
  return unpairedSurrogate.test(value)
    ? 'must be well-formed Unicode (it has an unpaired surrogate)'
    : undefined
}

/** An Ajv issue with `data`, as `verbose: true` gives them (the error handler reads it). */
export type ValueIssue = FastifySchemaValidationError & { readonly data?: unknown }

function issue(path: string, message: string, data: unknown): ValueIssue {
  return {
    keyword: unstorableValueKeyword,
    instancePath: path,
    schemaPath: `#/${unstorableValueKeyword}`,
    params: {},
    message,
    data,
  }
}
