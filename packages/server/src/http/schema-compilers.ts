/**
 * @module The compilers of route schemas: Ajv validators (http/validation.ts) and fast-json-stringify
 * serializers. Compiling them is most of the cost of building an app (each route's body, query,
 * params, headers and every response status). A `CompiledSchemas` cache shared between apps of
 * one process (the tests build hundreds) compiles each distinct schema once; production builds
 * one app and gets a fresh cache. The tests' cache is also lazy: a schema is compiled when its
 * route first validates or serializes, since most test files call a handful of routes.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifySchema, FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import { createValidatorCompiler } from './validation.js'

/** Compiled validators and serializers by schema content; share one between apps to build them faster. */
export class CompiledSchemas {
  readonly validators = new Map<string, unknown>()
  readonly serializers = new Map<string, unknown>()
  /** Compile each schema on its first use instead of when the app is built (tests; production compiles up front). */
  readonly lazy: boolean
  /**
   * What the maps above hold for a schema object, by the rest of its key: the apps of a test process
   * pass the same objects again and again, found here without writing out (and hashing) their JSON.
   */
  readonly #bySchema = new WeakMap<object, Map<string, unknown>>()
  constructor(options: { readonly lazy?: boolean } = {}) {
    this.lazy = options.lazy ?? false
  }

  /** What `compiled` holds for `schema` under `prefix` (by the object, then by its JSON), else `make()`'s, kept. */
  reuse(compiled: Map<string, unknown>, prefix: string, schema: unknown, make: () => unknown): unknown {
    const known = typeof schema === 'object' && schema !== null ? this.#bySchema.get(schema) : undefined
    const found = known?.get(prefix)
    if (found !== undefined) {
      return found
    }
    const key = `${prefix}\n${contentKey(schema)}`
    let value = compiled.get(key)
    if (value === undefined) {
      value = make()
      compiled.set(key, value)
    }
    if (typeof schema === 'object' && schema !== null) {
      const byPrefix = known ?? new Map<string, unknown>()
      byPrefix.set(prefix, value)
      this.#bySchema.set(schema, byPrefix)
    }
    return value
  }
}

/**
 * A schema's JSON, remembered per schema object: the apps of a test process register the same
 * protocol schema objects again and again, and Fastify never changes a schema it was given.
 */
const contentKeys = new WeakMap<object, string>()
function contentKey(schema: unknown): string {
  if (typeof schema !== 'object' || schema === null) {
    return JSON.stringify(schema)
  }
  let key = contentKeys.get(schema)
  if (key === undefined) {
    key = JSON.stringify(schema)
    contentKeys.set(schema, key)
  }
  return key
}

type Validator = ReturnType<FastifySchemaCompiler<FastifySchema>> & {
  errors?: unknown
  schemaEnv?: unknown
  schema?: unknown
}

/**
 * A validator that compiles on its first call. Fastify reads `schemaEnv` before calling (to pass
 * the parent object) and `errors` after: both come from the compiled one.
 */
function lazyValidator(compile: () => Validator): Validator {
  let compiled: Validator | undefined
  const real = () => {
    compiled ??= compile()
    return compiled
  }
  const validate = ((data: unknown, context?: unknown) => {
    const inner = real()
    const result = (inner as (data: unknown, context?: unknown) => unknown)(data, context)
    validate.errors = inner.errors
    return result
  }) as Validator
  Object.defineProperty(validate, 'schemaEnv', { get: () => real().schemaEnv })
  Object.defineProperty(validate, 'schema', { get: () => real().schema })
  return validate
}

/** A validator compiler that reuses what `cache` holds (keyed by the part and the schema's JSON). */
export function cachingValidatorCompiler(cache: CompiledSchemas): FastifySchemaCompiler<FastifySchema> {
  const compile = createValidatorCompiler()
  return (route) =>
    cache.reuse(cache.validators, String(route.httpPart), route.schema, () =>
      cache.lazy ? lazyValidator(() => compile(route) as Validator) : compile(route),
    ) as ReturnType<typeof compile>
}

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type BuildSerializer = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildSerializer']>

/**
 * Fastify's own serializer factory (@fastify/fast-json-stringify-compiler), reusing what `cache`
 * holds. The key includes the shared schemas (`app.addSchema`) the serializer may `$ref`.
 */
export function cachingSerializerFactory(cache: CompiledSchemas): BuildSerializer {
  const build = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    // Each shared schema by its remembered JSON: the apps of a test process add the same objects.
    const shared = JSON.stringify([
      Object.entries(externalSchemas ?? {}).map(([id, schema]) => [id, contentKey(schema)]),
      options ?? null,
    ])
    return (route) =>
      cache.reuse(cache.serializers, shared, route.schema, () => {
        const written = { ...route, schema: nullableForSerialization(route.schema) }
        if (!cache.lazy) {
          return compile(written)
        }
        let compiled: ((data: unknown) => string) | undefined
        return (data: unknown) => {
          compiled ??= compile(written)
          return compiled(data)
        }
      }) as ReturnType<ReturnType<BuildSerializer>>
  }
}

/** Keys whose values are data, not schemas: left as they are. */
const dataKeywords = new Set(['const', 'default', 'enum', 'example', 'examples'])
const scalarTypes = new Set(['string', 'number', 'integer', 'boolean', 'null'])

/**
 * Fast path (docs/decisions/0029-responses-without-anyof.md): the response schema fast-json-stringify writes with, without the `anyOf`s
 * it would have to choose between by running Ajv on each value (date-time formats included:
 * ajv-formats' `date_time`, `date` and `time` took 2.7% of a validation's busy time). TypeBox's
 * `Type.Union([X, Type.Null()])` becomes X with `nullable: true` (one `=== null`); a union of
 * scalars (metadata values, enums) becomes a list of types (one `typeof`). Validation by key on
 * PostgreSQL: +7% in turns (docs/decisions/0029-responses-without-anyof.md). The OpenAPI document and the request
 * validators keep the schema as it is: the server produces these values itself, so there is
 * nothing for the writer to check.
 */
export function nullableForSerialization(schema: unknown): unknown {
  if (Array.isArray(schema)) {
    return schema.map(nullableForSerialization)
  }
  if (typeof schema !== 'object' || schema === null) {
    return schema
  }
  const written: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    written[key] = dataKeywords.has(key) ? value : nullableForSerialization(value)
  }
  const { anyOf, ...siblings } = written
  if (!Array.isArray(anyOf)) {
    return written
  }
  const branches = anyOf as Record<string, unknown>[]
  const others = branches.filter((branch) => branch.type !== 'null')
  const [other] = others
  if (others.length === 1 && other !== undefined && !isCombinator(other)) {
    const type = scalarType(other) ?? other.type
    return type === undefined ? written : { ...other, type, ...siblings, nullable: true }
  }
  const types = branches.map(scalarType)
  if (types.some((type) => type === undefined)) {
    return written
  }
  const unique = [
    ...new Set(types.map((type) => (type === 'integer' && types.includes('number') ? 'number' : type))),
  ]
  return { ...siblings, type: unique.length === 1 ? unique[0] : unique }
}

/** The JSON type of a branch that is only a scalar (a type, a string constant, an enum of strings). */
function scalarType(branch: Record<string, unknown>): string | undefined {
  if (isCombinator(branch) || 'properties' in branch || 'items' in branch) {
    return undefined
  }
  if (typeof branch.type === 'string' && scalarTypes.has(branch.type)) {
    return branch.type
  }
  const strings = Array.isArray(branch.enum) ? branch.enum : 'const' in branch ? [branch.const] : []
  return strings.length > 0 && strings.every((value) => typeof value === 'string') ? 'string' : undefined
}

function isCombinator(branch: Record<string, unknown>): boolean {
  return (
    'anyOf' in branch || 'oneOf' in branch || 'allOf' in branch || '$ref' in branch || 'nullable' in branch
  )
}
