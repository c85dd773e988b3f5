import { isDeepStrictEqual } from 'node:util'
import type { FieldError } from '@keyturn/protocol'
import type { FastifyRequest, preHandlerAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify'
import { DomainError } from '../../core/errors.js'

const sentBodies = new WeakMap<FastifyRequest, unknown>()

/**
 * Fastify's Ajv coerces a body value that fails its schema into one that passes (its default
 * `coerceTypes`): `maxActivations: 0`, `false` or `""` become `null`, an unlimited license;
 * `expirationDate: ""` becomes `null`, one that never expires; `"3"` becomes 3. Until the app
 * validates bodies without coercion, license routes keep the body as sent and answer 400 for any
 * field the validation changed. The route's body schema must declare no defaults (Ajv fills them in).
 */
export function rejectCoercedBody(schema: { readonly properties: object }): {
  preValidation: preValidationAsyncHookHandler
  preHandler: preHandlerAsyncHookHandler
} {
  return {
    preValidation: async (request) => {
      sentBodies.set(request, structuredClone(request.body))
    },
    preHandler: async (request) => {
      const sent = sentBodies.get(request)
      const validated: unknown = request.body
      if (!isObject(sent) || !isObject(validated) || isDeepStrictEqual(sent, validated)) {
        return
      }
      const errors: FieldError[] = Object.keys(sent)
        .filter((name) => !isDeepStrictEqual(Reflect.get(sent, name), Reflect.get(validated, name)))
        .map((name) => ({
          pointer: `#/${name}`,
          detail: `${name} must be ${describe(Reflect.get(schema.properties, name))}; got ${JSON.stringify(Reflect.get(sent, name))}`,
        }))
      throw new DomainError(
        'validation_failed',
        `The body does not match the schema: ${errors.map((error) => error.detail).join('; ')}.`,
        { fieldErrors: errors },
      )
    },
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** "an integer from 1 to 1000000 or null", from a property schema (its `anyOf` members, type, bounds, format). */
function describe(schema: unknown): string {
  if (!isObject(schema)) {
    return 'valid'
  }
  if ('anyOf' in schema && Array.isArray(schema.anyOf)) {
    return schema.anyOf.map(describe).join(' or ')
  }
  const type = 'type' in schema && typeof schema.type === 'string' ? schema.type : 'value'
  if (type === 'null') {
    return 'null'
  }
  const format = 'format' in schema && typeof schema.format === 'string' ? `${schema.format} ` : ''
  const min = 'minimum' in schema ? ` from ${schema.minimum}` : ''
  const max = 'maximum' in schema ? ` to ${schema.maximum}` : ''
  const phrase = `${format}${type}${min}${max}`
  return `${/^[aeiou]/.test(phrase) ? 'an' : 'a'} ${phrase}`
}
