import { Ajv, type Options } from 'ajv'
import ajvFormats from 'ajv-formats'
import type { FastifySchema, FastifySchemaCompiler } from 'fastify'

/** Fastify's own Ajv options (@fastify/ajv-compiler), except where noted. */
const options: Options = {
  useDefaults: true,
  removeAdditional: false, // reject unknown fields, don't strip them
  allErrors: true, // report every problem at once; bodies are bounded by bodyLimit, problems by the handler
  addUsedSchema: false,
  verbose: true, // issues carry the schema and value, so a failed anyOf can say what the field accepts
}

/**
 * Route-schema validators with two Ajv instances. A JSON body is checked as sent: Fastify's default
 * coerces a wrong type into a valid one (`"name": 123` becomes "123"; for a nullable integer `0`,
 * `false` and `""` become null), so a client's mistake would be stored instead of refused. Query
 * strings, path parameters and headers are text, so they keep coercion (`?limit=10` is 10).
 */
export function createValidatorCompiler(): FastifySchemaCompiler<FastifySchema> {
  const addFormats = ajvFormats.default // a CommonJS module: its default export is the plugin
  const body = addFormats(new Ajv({ ...options, coerceTypes: false }))
  const text = addFormats(new Ajv({ ...options, coerceTypes: 'array' }))
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema)
}
