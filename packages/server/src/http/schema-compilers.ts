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
  constructor(options: { readonly lazy?: boolean } = {}) {
    this.lazy = options.lazy ?? false
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
  return (route) => {
    const key = `${route.httpPart}\n${contentKey(route.schema)}`
    let validate = cache.validators.get(key)
    if (validate === undefined) {
      validate = cache.lazy ? lazyValidator(() => compile(route) as Validator) : compile(route)
      cache.validators.set(key, validate)
    }
    return validate as ReturnType<typeof compile>
  }
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
    const shared = JSON.stringify([externalSchemas ?? null, options ?? null])
    return (route) => {
      const key = `${shared}\n${contentKey(route.schema)}`
      let serialize = cache.serializers.get(key)
      if (serialize === undefined) {
        if (cache.lazy) {
          let compiled: ((data: unknown) => string) | undefined
          serialize = (data: unknown) => {
            compiled ??= compile(route)
            return compiled(data)
          }
        } else {
          serialize = compile(route)
        }
        cache.serializers.set(key, serialize)
      }
      return serialize as ReturnType<typeof compile>
    }
  }
}
