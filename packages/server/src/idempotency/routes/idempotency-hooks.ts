/**
 * @module The `Idempotency-Key` header on every POST of the API scope it is registered in: the
 * header's schema (a 400 past 255 characters, and its place in the OpenAPI document), the claim
 * before the handler runs, the replay, and storing the response as it is sent.
 */
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { DomainError } from '../../core/errors.js'
import type { App } from '../../http/app-types.js'
import { withProblems } from '../../http/responses.js'
import { maxIdempotencyKeyLength } from '../idempotency.js'
import type { IdempotencyService } from '../idempotency-service.js'
import type { NewClaim } from '../idempotency-store.js'

const headerName = 'idempotency-key'

/**
 * How a retry answers when the first request committed its change but crashed before its response
 * was stored: `replay` (default) sends the data of the request's first event (the resource as the
 * route returned it) with the route's success status; `rerun` runs the request again (a token:
 * nothing stored but the audit entry); `refuse` answers 409 `idempotency_key_unrecoverable` (a
 * response holding a secret shown once).
 */
export type IdempotencyRecovery = 'replay' | 'rerun' | 'refuse'

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotencyRecovery?: IdempotencyRecovery
    /**
     * The success response holds a secret or token shown once (a new API key, a webhook secret, a
     * license token): its copy for replays is stored encrypted, never in clear.
     */
    responseHoldsSecret?: boolean
  }
}

const IdempotencyKeyHeaderSchema = Type.String({
  minLength: 1,
  maxLength: maxIdempotencyKeyLength,
  description: `Makes the POST safe to retry: the first response for this key (per API key) is kept 24 hours and replayed, with \`Idempotent-Replayed: true\`, for a retry with the same method, path and body. The same key with another request is a 422 \`idempotency_key_reused\`; a retry while the first request runs is a 409 \`idempotency_key_in_progress\`. At most ${maxIdempotencyKeyLength} characters; a random UUID is a good key.`,
  examples: ['4b1f7c0e-2d7a-4c1e-9a57-1f0f1d6b8e42'],
})

/** Registers the header on every POST route registered after this call in `api`. */
export function registerIdempotency(api: App, idempotency: IdempotencyService): void {
  const running = new WeakMap<FastifyRequest, NewClaim>()

  api.addHook('onRoute', (route) => {
    if ([route.method].flat().includes('POST')) {
      const config = route.config as FastifyContextConfig | undefined
      const mayBeUnrecoverable =
        config?.idempotencyRecovery === 'refuse' || config?.responseHoldsSecret === true
      route.schema = {
        ...route.schema,
        headers: withIdempotencyKeyHeader(route.schema?.headers),
        response: withProblems(route.schema?.response, [
          'idempotency_key_in_progress',
          'idempotency_key_reused',
          ...(mayBeUnrecoverable ? (['idempotency_key_unrecoverable'] as const) : []),
        ]),
      }
    }
  })

  // Callback-style hooks with a synchronous way out: a request without the header, or
  // not a POST, costs no promise.
  // After authentication and validation: a request refused before it could run is not recorded.
  api.addHook('preHandler', (request, reply, done) => {
    const key = request.headers[headerName]
    if (request.method !== 'POST' || typeof key !== 'string') {
      done()
      return
    }
    // Resolves once a replayed answer is sent (the promise adopts the reply), like an async hook's.
    claimOrReplay(request, reply, key).then(() => done(), done)
  })

  async function claimOrReplay(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
  ): Promise<FastifyReply | undefined> {
    const start = await idempotency.start(
      request.principal,
      key,
      // As sent: `/v0/…` is rewritten to `/api/v0/…` for routing, but stays a request of its own here.
      { method: request.method, url: request.originalUrl, body: request.body },
      request.id,
    )
    if (start.kind === 'run') {
      running.set(request, start.claim)
      return
    }
    if (start.kind === 'recover') {
      return recover(request, reply, start.claim, start.events)
    }
    const { status, contentType, body } = start.response
    reply.code(status).header('Idempotent-Replayed', 'true')
    if (contentType !== null) {
      reply.header('content-type', contentType)
    }
    return reply.send(body ?? undefined)
  }

  async function recover(
    request: FastifyRequest,
    reply: FastifyReply,
    claim: NewClaim,
    events: readonly { readonly data: Record<string, unknown> }[],
  ): Promise<FastifyReply | undefined> {
    const mode = request.routeOptions.config.idempotencyRecovery ?? 'replay'
    const [first] = events
    if (mode === 'rerun' || first === undefined) {
      const taken = await idempotency.rerun(claim, request.id)
      if (taken === undefined) {
        throw new DomainError(
          'idempotency_key_in_progress',
          'A request with this Idempotency-Key is still running; retry after it finishes.',
        )
      }
      running.set(request, taken)
      return undefined
    }
    if (mode === 'refuse') {
      throw new DomainError(
        'idempotency_key_unrecoverable',
        'The request with this Idempotency-Key completed, but its response held a secret or token that is shown only once and was lost; nothing new was created. Find the object in GET /events by that request.',
      )
    }
    // Stored when sent (onSend), under the first request's claim, so later retries replay bytes.
    running.set(request, claim)
    const status = successStatus(request.routeOptions.schema?.response)
    reply.code(status).header('Idempotent-Replayed', 'true')
    return reply.send(status === 204 || status === 202 ? undefined : first.data)
  }

  api.addHook('onSend', (request, reply, payload, done) => {
    const claim = running.get(request)
    if (claim === undefined) {
      done(null, payload)
      return
    }
    running.delete(request)
    void record(request, reply, payload, claim).then(() => done(null, payload))
  })

  /** Stores the answer under the claim, or frees the claim; never fails the request. */
  async function record(request: FastifyRequest, reply: FastifyReply, payload: unknown, claim: NewClaim) {
    try {
      if (reply.statusCode >= 500 || !isStorable(payload)) {
        // A server error may be transient: the retry must run again, not replay the failure.
        await idempotency.release(claim)
      } else {
        const contentType = reply.getHeader('content-type')
        await idempotency.finish(
          claim,
          {
            status: reply.statusCode,
            contentType: typeof contentType === 'string' ? contentType : null,
            body: payload === null || payload === undefined ? null : String(payload),
          },
          request.routeOptions.config.responseHoldsSecret === true && reply.statusCode < 300,
        )
      }
    } catch (error) {
      // The request itself succeeded or failed on its own: answer with that, not with a 500 that
      // would invite a retry. The claim lapses after its lease.
      request.log.error({ err: error }, 'could not record the idempotency key')
    }
  }

  // When no response was sent through onSend (a hook failed, the connection broke), free the key.
  api.addHook('onResponse', (request, _reply, done) => {
    const claim = running.get(request)
    if (claim === undefined) {
      done()
      return
    }
    running.delete(request)
    idempotency.release(claim).then(() => done(), done)
  })
}

/**
 * The status a route answers a change with: 201 for a create, else 200, 202 for work queued
 * (no body), or 204 without a body.
 */
function successStatus(response: unknown): 200 | 201 | 202 | 204 {
  const statuses = isObject(response) ? Object.keys(response) : []
  return statuses.includes('201')
    ? 201
    : statuses.includes('200')
      ? 200
      : statuses.includes('202')
        ? 202
        : 204
}

function isStorable(payload: unknown): payload is string | Buffer | null | undefined {
  return payload === null || payload === undefined || typeof payload === 'string' || Buffer.isBuffer(payload)
}

function withIdempotencyKeyHeader(headers: unknown): unknown {
  const existing = isObject(headers) && isObject(headers.properties) ? headers : undefined
  const properties = isObject(existing?.properties) ? existing.properties : {}
  return {
    type: 'object',
    ...existing,
    properties: { ...properties, [headerName]: IdempotencyKeyHeaderSchema },
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}
