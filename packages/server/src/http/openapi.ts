import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'

/** The OpenAPI 3.1 document's frame; every operation comes from its route schema. */
export const openApiOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Keyturn API',
      version: '0.1.0',
      description:
        'Self-hostable software licensing: products, licenses, online validation and signed license tokens. Every path is served under `/api/v0` and, identically, under `/v0`. Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`. Besides the answers each operation lists, any request may get one the HTTP layer gives before an operation is chosen: 400 `bad_request` (not HTTP/1.1: an unknown method, a malformed path, Content-Length with Transfer-Encoding, no Host header), 431 `headers_too_large` (request line and headers over 16 KiB) or 408 `request_timeout`; these close the connection.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/api/v0' }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key: `Authorization: Bearer kt_…`',
        },
      },
    },
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'licenses', description: 'Licenses: create, list, update, revoke, reinstate and validate' },
      {
        name: 'activations',
        description: 'Activations: machines holding a license seat, enforcing maxActivations',
      },
      { name: 'products', description: 'Products and their signing keys' },
      { name: 'api-keys', description: 'API keys (admin only)' },
    ],
  },
  // Paths in the document are relative to the server URL above.
  transform: ({ schema, url }) => ({ schema, url: url.replace(/^\/api\/v0/, '') }),
  transformObject: (document) =>
    'openapiObject' in document ? withProblemMediaType(document.openapiObject) : document.swaggerObject,
}

/** Error responses are sent as `application/problem+json` (RFC 9457); say so in the document. */
function withProblemMediaType<T extends { paths?: object }>(document: T): T {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(isObject(operations) ? operations : {})) {
      const responses = isObject(operation) && isObject(operation.responses) ? operation.responses : {}
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400 && isObject(response) && isObject(response.content)) {
          const { 'application/json': json, ...others } = response.content
          if (json !== undefined) {
            response.content = { 'application/problem+json': json, ...others }
          }
        }
      }
    }
  }
  return document
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}
