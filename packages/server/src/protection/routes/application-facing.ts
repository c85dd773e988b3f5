/**
 * @module What every API route gets (its rate-limit budget, 429 in its OpenAPI responses) and what
 * the application-facing by-key routes (`config: { applicationFacing: true }`) get besides: the
 * key-guessing guard, the echoed `nonce` and signed answers (RFC 9421 over an RFC 9530 digest).
 */
import { hash } from 'node:crypto'
import {
  answerSignatureBase,
  answerSignatureParams,
  NonceSchema,
  type ProductId,
  signatureLabel,
} from '@keyturn/protocol'
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { TSchema } from 'typebox'
import type { Clock } from '../../core/clock.js'
import type { App } from '../../http/app-types.js'
import { problemFor, sendProblem } from '../../http/error-handler.js'
import { withProblems } from '../../http/responses.js'
import type { TokenService } from '../../tokens/token-service.js'
import { Limits, limitApiRequest } from './rate-limits.js'

export interface ApiProtectionDeps {
  readonly tokens: TokenService
  readonly clock: Clock
  /** Absent: no rate limits and no guard (signed answers and the nonce always work). */
  readonly limits: Limits | undefined
}

const nonceOf = Symbol('keyturn.nonce')
type WithNonce = FastifyRequest & { [nonceOf]?: string }
type Hook = (...args: never[]) => unknown

/**
 * Registers, on an API scope and before its routes: the rate-limit hook (after `authenticate`) and
 * the onRoute hook that equips every route. Returns the function `authenticate` calls before
 * answering 401 (the address budget also counts unauthenticated requests).
 */
export function registerApiProtection(api: App, deps: ApiProtectionDeps): void {
  const { limits } = deps
  if (limits !== undefined) {
    api.addHook('onRequest', limitApiRequest(limits))
  }
  api.addHook('onRoute', (route) => {
    route.config = { ...route.config, keyturnApi: true }
    route.schema = {
      ...route.schema,
      response: withProblems(route.schema?.response, ['rate_limited']),
    }
    if (route.config.applicationFacing === true) {
      equipApplicationFacing(route as RouteOptions, deps)
    }
  })
}

function equipApplicationFacing(route: RouteOptions, deps: ApiProtectionDeps): void {
  const { limits } = deps
  const schema = route.schema ?? {}
  const response = schema.response as Record<string, TSchema> | undefined
  route.schema = {
    ...schema,
    ...(schema.body === undefined ? {} : { body: withNonce(schema.body as TSchema) }),
    response: Object.fromEntries(
      Object.entries(response ?? {}).map(([status, answer]) => [
        status,
        status.startsWith('2') ? withNonce(answer) : answer,
      ]),
    ),
    headers: withSignHeader(schema.headers),
  }

  // Callback-style hooks: no promise on a request that needs no waiting (an admin or
  // product key, no nonce, an unsigned answer); see rate-limits.ts's Limits.
  addHook(route, 'onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (limits === undefined || reply.sent || request.principal?.role !== 'client') {
      done()
      return
    }
    limits.blockedFor(request, (seconds) => {
      if (seconds === 0) {
        done()
        return
      }
      reply.header('Retry-After', seconds)
      // Answered: the hook chain stops here.
      sendProblem(
        reply,
        problemFor(
          'rate_limited',
          `Too many requests for unknown license keys from this address. Retry after ${seconds} seconds.`,
          request.id,
        ),
      )
    })
  })
  // The nonce is the transport's, not the operation's: the handler never sees it.
  addHook(route, 'preHandler', (request: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const body = request.body as { nonce?: unknown } | null | undefined
    if (typeof body === 'object' && body !== null && typeof body.nonce === 'string') {
      ;(request as WithNonce)[nonceOf] = body.nonce
      delete body.nonce
    }
    done()
  })
  addHook(
    route,
    'preSerialization',
    (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload: unknown) => void,
    ) => {
      const nonce = (request as WithNonce)[nonceOf]
      if (nonce === undefined || reply.statusCode >= 300 || typeof payload !== 'object' || payload === null) {
        done(null, payload)
        return
      }
      done(null, { ...payload, nonce })
    },
  )
  addHook(
    route,
    'onSend',
    (
      request: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (error: Error | null, payload?: unknown) => void,
    ) => {
      const sign = () => {
        signAnswer(request, reply, payload, deps).then(
          (signed) => done(null, signed),
          (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
        )
      }
      if (
        limits !== undefined &&
        reply.statusCode === 404 &&
        request.principal?.role === 'client' &&
        typeof payload === 'string' &&
        payload.includes('"code":"license_not_found"')
      ) {
        limits.countGuess(request, sign)
        return
      }
      sign()
    },
  )
}

/** Adds the RFC 9530 digest and the RFC 9421 signature when asked or when the product wants it. */
async function signAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  deps: ApiProtectionDeps,
): Promise<unknown> {
  const productId = answeringProduct(request)
  // A 5xx says nothing about a license, and signing it would need the product's key from the
  // database that may just have failed (a 503 during an outage): it goes unsigned.
  if (
    reply.statusCode >= 500 ||
    productId === undefined ||
    !(typeof payload === 'string' || payload == null || Buffer.isBuffer(payload))
  ) {
    return payload
  }
  const signer = await deps.tokens.answerSigner(productId)
  const asked = request.headers['keyturn-sign'] !== undefined // the schema allows only ed25519
  if (signer === undefined || !(asked || signer.signResponses)) {
    return payload
  }
  const contentDigest = `sha-256=:${hash('sha256', payload ?? '', 'base64')}:`
  const created = Math.floor(deps.clock.now().getTime() / 1000)
  const date = new Date(created * 1000).toUTCString()
  const signatureParams = answerSignatureParams(created, signer.keyId)
  const base = answerSignatureBase({
    status: reply.statusCode,
    contentDigest,
    date,
    method: request.method,
    // As the client sent it (`/v0/…` is rewritten to `/api/v0/…` before routing).
    path: request.originalUrl.split('?')[0] ?? request.originalUrl,
    signatureParams,
  })
  reply.header('Content-Digest', contentDigest)
  reply.header('Date', date)
  reply.header('Signature-Input', `${signatureLabel}=${signatureParams}`)
  const signature = await signer.sign(Buffer.from(base))
  reply.header('Signature', `${signatureLabel}=:${signature.toString('base64')}:`)
  return payload
}

/** The product whose key signs: the API key's, or for an admin key the body's `productId`. */
function answeringProduct(request: FastifyRequest): ProductId | undefined {
  const principal = request.principal as FastifyRequest['principal'] | undefined
  if (principal === undefined || principal === null) {
    return undefined
  }
  if (principal.role !== 'admin') {
    return principal.productId
  }
  const productId = (request.body as { productId?: unknown } | undefined)?.productId
  return typeof productId === 'string' && productId.startsWith('prd_') ? (productId as ProductId) : undefined
}

function withSignHeader(headers: unknown): unknown {
  const existing = headers as { properties?: Record<string, unknown> } | undefined
  return {
    type: 'object',
    ...existing,
    properties: {
      ...existing?.properties,
      'keyturn-sign': {
        type: 'string',
        enum: ['ed25519'],
        description:
          'Asks for a signed answer: `Content-Digest` (RFC 9530) and an RFC 9421 signature (`Signature-Input`, `Signature`) by the product’s current signing key.',
      },
    },
  }
}

/** An object schema with an optional `nonce` added; anything else as it is. */
function withNonce(schema: TSchema): TSchema {
  const objectSchema = schema as TSchema & { properties?: Record<string, TSchema> }
  if (objectSchema.properties === undefined || 'nonce' in objectSchema.properties) {
    return schema
  }
  return { ...objectSchema, properties: { ...objectSchema.properties, nonce: NonceSchema } } as TSchema
}

function addHook(
  route: RouteOptions,
  name: 'onRequest' | 'preHandler' | 'preSerialization' | 'onSend',
  hook: Hook,
) {
  const existing = route[name] as Hook | Hook[] | undefined
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
  ;(route as unknown as Record<string, Hook[]>)[name] = [...list, hook]
}

export { Limits }
