import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import * as protocol from '@keyturn/protocol'
import { type ErrorCode, errorCatalogue, problemType } from '@keyturn/protocol'
import { problemCodesOf } from './responses.js'

/**
 * @module The OpenAPI 3.1 document: its frame, and the two hooks of @fastify/swagger that turn the
 * route schemas into named components. Every object schema the protocol package exports is a
 * component named after its export (`LicenseResourceSchema` → `License`, `LicenseListSchema` →
 * `LicenseList`, `CreateLicenseBodySchema` → `CreateLicenseBody`); wherever a route uses it, the
 * document says `$ref: '#/components/schemas/License'`. A new resource gets its components by
 * exporting its schemas from the protocol package, nothing else. Problem responses get one example
 * per code they list (`problemResponses` in responses.ts).
 */

const marker = 'x-keyturn-component'
const codesMarker = 'x-keyturn-codes'

interface Component {
  readonly name: string
  readonly schema: Record<string, unknown>
}

/** The protocol's exported object schemas, by name. */
const components: readonly Component[] = Object.entries(protocol).flatMap(([exportName, value]) => {
  if (!exportName.endsWith('Schema') || !isObject(value) || (value as { type?: unknown }).type !== 'object') {
    return []
  }
  if (/(Query|Params|Claims)Schema$/.test(exportName)) {
    return [] // parameters are listed one by one; claims never travel as a body
  }
  return [{ name: exportName.replace(/Schema$/, '').replace(/Resource$/, ''), schema: value }]
})

for (const [index, { name }] of components.entries()) {
  if (components.findIndex((other) => other.name === name) !== index) {
    throw new Error(`Two protocol schemas would both be the OpenAPI component ${name}: rename one export`)
  }
}

/** The component a schema is, by identity (a spread copy keeps its `properties` object). */
function componentOf(schema: Record<string, unknown>): Component | undefined {
  return components.find(
    (component) =>
      component.schema === schema ||
      (schema.properties !== undefined && component.schema.properties === schema.properties),
  )
}

/** Paths served from the server's root rather than /api/v0: the dashboard's sign-in routes. */
export const rootPathPrefix = '/operator/'

/** The OpenAPI 3.1 document's frame; every operation comes from its route schema. */
export const openApiOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Keyturn API',
      version: '0.1.0',
      description: [
        'Self-hostable software licensing: products, licenses, online validation and signed license tokens.',
        'Every path is served under `/api/v0` and, identically, under `/v0`.',
        'Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`; each `type` is a page about its code (`/problems/<code>`, all codes at `/problems`).',
        'A known path asked with a method it does not have answers `405 method_not_allowed` with an `Allow` header.',
        'The dashboard’s sign-in routes (tag `operator-sign-in`) are the exception: they are served at `/operator/…` from the server’s root, as each of their paths says.',
        'Besides the answers each operation lists, any request may get one the HTTP layer gives before an operation is chosen: 400 `bad_request` (not HTTP/1.1: an unknown method or CONNECT, a malformed path, Content-Length with Transfer-Encoding, no Host header or two), 431 `headers_too_large` (request line and headers over 16 KiB), 408 `request_timeout` (the headers or the whole request not received within 60 s), 417 `expectation_failed` (an `Expect` other than `100-continue`), or 415 `unsupported_media_type` for a compressed body; those from the HTTP parser close the connection.',
        "A JSON body may nest objects and arrays at most 32 levels deep, and no text may hold U+0000 or an unpaired surrogate (400 `validation_failed`; a path id holding U+0000 is the resource's 404).",
      ].join(' '),
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { name: 'Keyturn maintainers (see SECURITY.md to report a vulnerability)' },
    },
    servers: [{ url: '/api/v0' }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key: `Authorization: Bearer kt_…`',
        },
        operatorSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'keyturn_operator_session',
          description:
            'A person signed in to the dashboard (`POST /operator/sign-in`): the httpOnly session cookie, and on every write (POST, PATCH, DELETE) the session’s CSRF token in the `X-Keyturn-Csrf` header (403 without it). What the operator’s role allows is in each operation’s description. A request with both this cookie and an `Authorization` header is a 400.',
        },
      },
    },
    security: [{ bearerAuth: [] }, { operatorSession: [] }],
    tags: [
      { name: 'licenses', description: 'Licenses: create, list, update, revoke, reinstate and validate' },
      {
        name: 'activations',
        description:
          'Activations: machines holding a license seat, enforcing maxActivations; floating seats lapse without heartbeats (heartbeatTtl)',
      },
      {
        name: 'usage',
        description: 'Metered usage: a counter per license (uses) with an optional limit (maxUses)',
      },
      { name: 'products', description: 'Products and their signing keys' },
      { name: 'api-keys', description: 'API keys (admin only)' },
      {
        name: 'operators',
        description: 'Operator accounts: the people who sign in to the dashboard, and their roles',
      },
      { name: 'events', description: 'Events: the audit log of every change, and the payload of webhooks' },
      { name: 'customers', description: 'Customers: who owns licenses' },
      { name: 'search', description: 'Search: find licenses, customers and machines from one box' },
      { name: 'stats', description: 'Statistics: daily counts per product, and figures of now' },
      { name: 'entitlements', description: 'Entitlements: the features of a product that licenses unlock' },
      { name: 'policies', description: 'Policies: plans that licenses are made from' },
      { name: 'webhooks', description: 'Webhook endpoints and their deliveries (Standard Webhooks)' },
      {
        name: 'integrations',
        description: 'Stripe, Paddle and Lemon Squeezy: their webhooks create, renew and end licenses',
      },
      {
        name: 'emails',
        description: 'The mail delivery log: what was queued and sent, never a message body',
      },
      {
        name: 'operator-sign-in',
        description:
          'Operator sign-in for the dashboard, served at the server’s root under `/operator` (not under `/api/v0`; no API key): passwords, setup and invitation links, password resets, second factors, single sign-on. A session is the httpOnly `keyturn_operator_session` cookie; every write of a signed-in operator sends the session’s CSRF token in `X-Keyturn-Csrf`.',
      },
    ],
  },
  // Paths in the document are relative to the server URL above. The route schema is copied with
  // its components marked, for the document only: validation and serialisation keep the original.
  transform: ({ schema, url }) => ({
    schema: schema === undefined ? schema : markRouteSchema(schema as Record<string, unknown>),
    // `/operator/2fa/` (a scope's root) is documented as `/operator/2fa`, which answers the same.
    url: url.startsWith(rootPathPrefix) ? url.replace(/(.)\/$/, '$1') : url.replace(/^\/api\/v0/, ''),
  }),
  transformObject: (document) =>
    'openapiObject' in document ? finishDocument(document.openapiObject) : document.swaggerObject,
}

/**
 * The interactive reference at /docs: Swagger UI, served from the package (no CDN). Operations
 * listed, schemas shown below them, "Try it out" with empty parameters (see finishOperation).
 */
export const swaggerUiOptions: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  uiConfig: {
    docExpansion: 'list',
    defaultModelsExpandDepth: 1,
    defaultModelExpandDepth: 2,
    displayRequestDuration: true,
    persistAuthorization: false,
    tryItOutEnabled: false,
  },
  theme: { title: 'Keyturn API reference' },
}

function markRouteSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const marked: Record<string, unknown> = { ...schema }
  if (isObject(schema.body)) {
    marked.body = mark(schema.body)
  }
  if (isObject(schema.response)) {
    marked.response = Object.fromEntries(
      Object.entries(schema.response).map(([status, response]) => [
        status,
        isObject(response) ? markResponse(response) : response,
      ]),
    )
  }
  return marked
}

function markResponse(response: Record<string, unknown>): Record<string, unknown> {
  const codes = problemCodesOf(response)
  return codes === undefined ? mark(response) : { ...mark(response), [codesMarker]: codes }
}

/** A copy of the schema in which each component is marked with its name. */
function mark(schema: Record<string, unknown>): Record<string, unknown> {
  const component = componentOf(schema)
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = markValue(value)
  }
  return component === undefined ? copy : { ...copy, [marker]: component.name }
}

function markValue(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(markValue)
  }
  return isObject(value) ? mark(value) : value
}

type Document = {
  paths?: object
  components?: { schemas?: Record<string, unknown>; examples?: Record<string, unknown> }
}

const csrfParameter = {
  name: 'x-keyturn-csrf',
  in: 'header',
  required: true,
  description: 'The session’s CSRF token (from the sign-in answer or `GET /operator/me`). Without it: 401.',
  schema: { type: 'string', maxLength: 200 },
}

/**
 * The sign-in routes live at the root: their path items name the root as their server, and their
 * writes that take the session cookie document the CSRF header.
 */
function finishRootPaths(paths: Record<string, unknown>): void {
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith(rootPathPrefix) || !isObject(item)) {
      continue
    }
    item.servers = [{ url: '/', description: 'The server’s root: these routes are not under /api/v0.' }]
    for (const [method, operation] of Object.entries(item)) {
      const security = isObject(operation) && Array.isArray(operation.security) ? operation.security : []
      const usesSession = security.some((entry) => isObject(entry) && 'operatorSession' in entry)
      if (method !== 'get' && isObject(operation) && usesSession) {
        operation.parameters = [
          ...(Array.isArray(operation.parameters) ? operation.parameters : []),
          csrfParameter,
        ]
      }
    }
  }
}

function finishDocument<T extends Document>(document: T): T {
  finishRootPaths((document.paths ?? {}) as Record<string, unknown>)
  const used = new Map<string, Record<string, unknown>>()
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(isObject(operations) ? operations : {})) {
      if (isObject(operation)) {
        finishOperation(operation)
      }
    }
  }
  replaceMarked(document.paths, used) // after finishOperation, which reads the schemas inline
  // Components reference each other: resolve until no new name turns up.
  const schemas: Record<string, unknown> = { ...document.components?.schemas }
  for (let pending = [...used.keys()]; pending.length > 0; ) {
    const found = new Map<string, Record<string, unknown>>()
    for (const name of pending) {
      const component = components.find((candidate) => candidate.name === name)
      if (component !== undefined && schemas[name] === undefined) {
        const schema = JSON.parse(JSON.stringify(mark(component.schema))) as Record<string, unknown> // a plain copy
        delete schema[marker]
        replaceMarked(schema, found)
        schemas[name] = schema
      }
    }
    pending = [...found.keys()].filter((name) => schemas[name] === undefined)
  }
  const paths = JSON.stringify(document.paths)
  const examples = Object.entries(problemExamples()).filter(([code]) =>
    paths.includes(`"#/components/examples/${code}"`),
  )
  document.components = {
    ...document.components,
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    examples: Object.fromEntries(examples),
  }
  return document
}

function finishOperation(operation: Record<string, unknown>): void {
  // Parameters start empty in "Try it out": a shared example Idempotency-Key made every second
  // request a 422, and an example id is never one of the reader's.
  for (const parameter of Array.isArray(operation.parameters) ? operation.parameters : []) {
    if (isObject(parameter)) {
      delete parameter.example
      delete parameter.examples
    }
  }
  const body = isObject(operation.requestBody) ? operation.requestBody : undefined
  const bodySchema = firstMediaSchema(body)
  if (body !== undefined && bodySchema !== undefined && !hasRequiredFields(bodySchema)) {
    body.required = false // an action whose fields are all optional may be sent without a body
  }
  const responses = isObject(operation.responses) ? operation.responses : {}
  for (const [status, response] of Object.entries(responses)) {
    if (Number(status) >= 400 && isObject(response)) {
      finishProblemResponse(response, Number(status))
    } else if (isObject(response) && response.description === 'Default Response') {
      response.description = successDescriptions[status] ?? 'Success' // @fastify/swagger's placeholder
    }
  }
}

const successDescriptions: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '204': 'No content',
}

/** Error responses are `application/problem+json` (RFC 9457), with an example for each code. */
function finishProblemResponse(response: Record<string, unknown>, status: number): void {
  const content = isObject(response.content) ? response.content : {}
  const media = content['application/json'] ?? content['application/problem+json']
  if (!isObject(media)) {
    return
  }
  const schema = isObject(media.schema) ? media.schema : {}
  const codes = (Array.isArray(schema[codesMarker]) ? schema[codesMarker] : []) as ErrorCode[]
  delete schema[codesMarker]
  delete media.example
  const examples = codes.filter((code) => errorCatalogue[code].status === status)
  if (examples.length > 0) {
    media.examples = Object.fromEntries(
      examples.map((code) => [code, { $ref: `#/components/examples/${code}` }]),
    )
  }
  response.content = { 'application/problem+json': media }
}

/** One example per error code, referenced by every response that lists the code. */
function problemExamples(): Record<string, unknown> {
  return Object.fromEntries(
    (Object.keys(errorCatalogue) as ErrorCode[]).map((code) => [
      code,
      { summary: errorCatalogue[code].title, value: exampleProblem(code) },
    ]),
  )
}

function exampleProblem(code: ErrorCode): Record<string, unknown> {
  const { status, title } = errorCatalogue[code]
  const problem: Record<string, unknown> = {
    type: problemType(code),
    title,
    status,
    detail: `${title}: see ${problemType(code)}.`,
    code,
    requestId: 'req_2mXc9vBn4KqLs7TdPw8yZa',
  }
  if (code === 'validation_failed') {
    problem.detail = 'The body does not match the schema: maxActivations must be >= 1.'
    problem.errors = [{ pointer: '#/maxActivations', detail: 'maxActivations must be >= 1' }]
  }
  return problem
}

/** Replaces every marked schema under `value` by a `$ref` to its component, collecting the names. */
function replaceMarked(value: unknown, used: Map<string, Record<string, unknown>>): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      value[index] = replaced(item, used)
    })
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      value[key] = replaced(item, used)
    }
  }
}

function replaced(value: unknown, used: Map<string, Record<string, unknown>>): unknown {
  if (isObject(value) && typeof value[marker] === 'string') {
    const name = value[marker]
    used.set(name, value)
    return { $ref: `#/components/schemas/${name}` }
  }
  replaceMarked(value, used)
  return value
}

function firstMediaSchema(body: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const content = isObject(body?.content) ? body.content : {}
  const media = Object.values(content)[0]
  return isObject(media) && isObject(media.schema) ? media.schema : undefined
}

function hasRequiredFields(schema: Record<string, unknown>): boolean {
  return Array.isArray(schema.required) && schema.required.length > 0
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
