/**
 * @module The JSON body parser: Fastify's own (secure-json-parse: no `__proto__` or `constructor`
 * poisoning), after checks that the body is UTF-8 and nests at most `maxJsonDepth` objects and
 * arrays deep.
 */
import type { FastifyInstance } from 'fastify'
import { DomainError, InvalidInputError } from '../core/errors.js'

/**
 * Strict: bytes that are not UTF-8 (a Latin-1 "Müller") refuse the body instead of becoming U+FFFD
 * and being stored so. A leading byte-order mark is dropped, as before.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The deepest nesting of objects and arrays a body may have; the deepest legitimate body (metadata
 * or a customPayload holding an object) is a few levels. Unbounded, a 6 KB body of nested arrays
 * overflowed the stack of whatever walked it first (validation, the idempotency hash, a problem's
 * field errors).
 */
export const maxJsonDepth = 32

/**
 * Replaces the `application/json` parser. The depth is measured on the text, in one pass with a
 * counter (no recursion that could itself overflow), before anything parses or walks the body.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string
    try {
      text = utf8.decode(typeof body === 'string' ? Buffer.from(body) : body) // parseAs buffer: a Buffer
    } catch {
      const detail = 'The body is not valid UTF-8 (JSON travels as UTF-8, RFC 8259 §8.1).'
      done(new DomainError('bad_request', detail), undefined)
      return
    }
    if (text.trim() === '') {
      done(null, undefined) // an empty chunked body: no body, read as `{}` by app.ts, not malformed JSON
      return
    }
    if (jsonDepth(text) > maxJsonDepth) {
      const detail = `The body nests objects and arrays more than ${maxJsonDepth} levels deep.`
      done(new InvalidInputError('#', detail), undefined)
      return
    }
    void parse(request, text, done) // Fastify's parser answers through `done`, synchronously
  })
}

/**
 * The deepest nesting of `{` and `[` outside strings; stops counting once past the limit. Text
 * that is not JSON gets some number here and is refused by the parser afterwards.
 */
export function jsonDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let isInString = false
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i)
    if (isInString) {
      if (char === 0x5c) {
        i++ // a backslash escapes the next character, which may be a quote
      } else if (char === 0x22) {
        isInString = false
      }
    } else if (char === 0x22) {
      isInString = true
    } else if (char === 0x7b || char === 0x5b) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > maxJsonDepth) {
          return deepest
        }
      }
    } else if (char === 0x7d || char === 0x5d) {
      depth--
    }
  }
  return deepest
}
