/**
 * @module The compilers of route schemas: Ajv validators (http/validation.ts) and fast-json-stringify
 * serializers. Compiling them is most of the cost of building an app (each route's body, query,
 * params, headers and every response status). A `CompiledSchemas` cache shared between apps of
 * one process (the tests build hundreds) compiles each distinct schema once; production builds
 * one app and gets a fresh cache.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import type { FastifySchema, FastifySchemaCompiler, FastifyServerOptions } from 'fastify'
import { createValidatorCompiler } from './validation.js'

/** Compiled validators and serializers by schema content; share one between apps to build them faster. */
export class CompiledSchemas {
  readonly validators = new Map<string, unknown>()
  readonly serializers = new Map<string, unknown>()
}

/** A validator compiler that reuses what `cache` holds (keyed by the part and the schema's JSON). */
export function cachingValidatorCompiler(cache: CompiledSchemas): FastifySchemaCompiler<FastifySchema> {
  const compile = createValidatorCompiler()
  return (route) => {
    const key = `${route.httpPart}\n${JSON.stringify(route.schema)}`
    let validate = cache.validators.get(key)
    if (validate === undefined) {
      validate = compile(route)
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
      const key = `${shared}\n${JSON.stringify(route.schema)}`
      let serialize = cache.serializers.get(key)
      if (serialize === undefined) {
        serialize = compile(route)
        cache.serializers.set(key, serialize)
      }
      return serialize as ReturnType<typeof compile>
    }
  }
}
