import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify'
import type { Principal } from '../core/principal.js'

/** The Fastify instance every route registers on, typed by its TypeBox schemas. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every API route. */
    principal: Principal
  }
  interface FastifyContextConfig {
    /**
     * The route's own statement confirms that the caller's API key still exists, and the route
     * answers 401 (`apiKeyGone`) when it does not: authentication may then take a key as this
     * process last read it (http/authenticate.ts). Validation, retrieval, creation, activation,
     * heartbeats by key, tokens and usage counts (docs/decisions/0016-api-key-confirmation.md lists them).
     */
    confirmsApiKey?: boolean
  }
}
