/**
 * @module Property-based test (fast-check): generated hostile bodies, query strings, path ids and
 * headers on every route the app registers, with every kind of credential. Every answer must be
 * below 500, every 4xx a problem with `code` and `Request-Id`, no body may carry internal text, a
 * refused request may change no data, and the data of a product only hostile credentials reach
 * stays as it was. `FUZZ_RUNS=<n>` sets the requests per route (default 2), `FUZZ_SEED` replays.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { it, type TestContext } from 'node:test'
import { ErrorCodeSchema } from '@keyturn/protocol'
import fc from 'fast-check'
import type { App } from '../http/app-types.js'
import { maxJsonDepth } from '../http/json-body.js'
import type { Connection } from '../storage/connect.js'
import {
  apiRoutes,
  type RouteFixture,
  recordServedRoutes,
  type ServedRoute,
  seedRouteFixture,
} from '../testing/api-routes.js'
import { buildTestApp, createProduct } from '../testing/build-test-app.js'
import { describeEachDatabase } from '../testing/each-database.js'
import { tableDigests } from '../testing/table-digests.js'

const runsPerRoute = Number(process.env.FUZZ_RUNS ?? 2)
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)

/** What no answer may contain: stack frames, paths, SQL and driver or engine messages. */
const internalText = [
  /\bat [\w.<>]+ \(/, // a stack frame
  /node:internal|node_modules|\/work\/|\.ts:\d+/,
  /\b(sqlite|SQLITE_\w+|postgres(ql)?|pg_\w+|kysely)\b/i,
  /syntax error|violates|duplicate key|relation "|column "|datatype mismatch|invalid input syntax|out of range for type/i,
  /Maximum call stack|TypeError|RangeError|ReferenceError|SyntaxError|Cannot read properties|is not a function|undefined is not/,
  /"statusCode":\s*5\d\d|Internal Server Error/,
]

const ids = {
  lic: (f: RouteFixture) => f.licenseId,
  prd: (f: RouteFixture) => f.productId,
  act: (f: RouteFixture) => f.activationId,
  key: (f: RouteFixture) => f.apiKeyId,
} as const

/** The id a path parameter after `/<resource>/` takes in `fixture`, by the resource's name. */
function idFor(resource: string, fixture: RouteFixture): string {
  switch (resource) {
    case 'licenses':
      return ids.lic(fixture)
    case 'products':
      return ids.prd(fixture)
    case 'activations':
      return ids.act(fixture)
    case 'api-keys':
      return ids.key(fixture)
    default:
      return `${resource.slice(0, 3)}_unknown`
  }
}

/** Strings that broke, or could break, something below the schema. */
const hostileText = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\uD800',
      'a\uDFFFb',
      '\uFEFF',
      '\u202E',
      '%00',
      '%',
      '..',
      '../../etc/passwd',
      '__proto__',
      'constructor',
      "'; drop table licenses; --",
      '" OR 1=1 --',
      '\\',
      '$1',
      '{}',
      '[]',
      'null',
      'Infinity',
      '-Infinity',
      'NaN',
      '1e309',
      '-0',
      '9007199254740993',
      '99999999999999999999',
      '0x10',
      '1.5',
      '-1',
      'lic_',
      'prd_',
      'act_',
      'key_',
      'lic_%00',
      'createdAt:desc:extra',
      `status:in:${'active|'.repeat(60)}`,
      'expirationDate:lt:not-a-date',
      'maxActivations:gt:1e309',
      'a'.repeat(300),
      'x'.repeat(5000),
      'é'.repeat(100),
      '😀'.repeat(70),
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 40, unit: 'binary' }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
)

/** A JSON value as text, including what JSON.stringify cannot produce (1e309, deep nesting, duplicate keys). */
const hostileJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? 'null'),
  hostileText.map((text) => JSON.stringify(text)),
  hostileText.map((text) => JSON.stringify(text)),
  hostileText.map((text) => JSON.stringify({ [text]: text })),
  fc.constantFrom(
    '1e309',
    '-1e309',
    '-0',
    '1.0000000000000002',
    '9007199254740993',
    '123456789012345678901234567890',
    '0.1e-400',
    'true',
    'null',
    '[]',
    '{}',
    '{"__proto__":{"isAdmin":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '"2030-02-30T00:00:00Z"',
    '"9999-12-31T23:59:59.999Z"',
    '"+275760-09-13T00:00:00.000Z"',
    '"0000-01-01T00:00:00Z"',
    '"2030-01-01T00:00:00.000+99:99"',
  ),
  fc.integer({ min: 1, max: maxJsonDepth + 8 }).map((depth) => `${'['.repeat(depth)}1${']'.repeat(depth)}`),
  fc
    .integer({ min: 1, max: maxJsonDepth + 8 })
    .map((depth) => `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`),
)

const bodyFieldNames = [
  'productId',
  'key',
  'fingerprint',
  'name',
  'metadata',
  'customPayload',
  'ttl',
  'maxActivations',
  'expirationDate',
  'role',
  'clientTokenTtl',
]

/** JSON text of `body` with `name` set to the raw JSON `json` (which JSON.stringify could not always make). */
function withField(body: Record<string, unknown>, name: string, json: string): string {
  const rest = Object.entries(body)
    .filter(([key]) => key !== name)
    .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
  return `{${[...rest, `${JSON.stringify(name)}:${json}`].join(',')}}`
}

/** A whole body as text: the route's valid body with one field made hostile, or anything at all. */
function hostileBody(valid: Record<string, unknown> | undefined): fc.Arbitrary<string> {
  const base = valid ?? {}
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.constantFrom(...Object.keys(base), ...bodyFieldNames), hostileJsonText)
        .map(([name, json]) => withField(base, name, json)),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(hostileText, hostileJsonText).map(([name, json]) => withField(base, name, json)),
    },
    { weight: 2, arbitrary: hostileJsonText },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '{',
        '{"a":1,}',
        '{"a":1}{"b":2}',
        '\uFEFF{}',
        `{"productId":"a","productId":"b"}`,
        'not json',
        '\u0000',
        `{"a":"${'\\u0000'.repeat(10)}"}`,
        `{"a":"\\ud800"}`,
        `{"a":${'1'.repeat(400)}}`,
      ),
    },
  )
}

/** Percent-encodes as a client would; a lone surrogate, which encodeURIComponent refuses, as CESU-8 bytes. */
function encode(text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return [...text]
      .map((char) => {
        try {
          return encodeURIComponent(char)
        } catch {
          const code = char.charCodeAt(0)
          return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            .map((byte) => `%${byte.toString(16).toUpperCase()}`)
            .join('')
        }
      })
      .join('')
  }
}

/** Header values: printable Latin-1 only, as HTTP carries (the raw-socket test covers the rest). */
const headerText = fc.oneof(
  fc.string({
    maxLength: 300,
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  }),
  fc.constantFrom('', ' ', 'é', 'x'.repeat(8000)),
)

interface Credentials {
  readonly name: string
  readonly headers: Record<string, string>
}

interface GeneratedRequest {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly payload?: string
}

/** One change that makes a valid request hostile. */
type Mutation =
  | { readonly kind: 'field'; readonly name: string; readonly json: string }
  | { readonly kind: 'body'; readonly text: string }
  | { readonly kind: 'query'; readonly name: string; readonly value: string }
  | { readonly kind: 'id'; readonly value: string }
  | { readonly kind: 'contentType'; readonly value: string }
  | { readonly kind: 'header'; readonly name: string; readonly value: string }

const mutation = (fields: readonly string[], hasBody: boolean, hasId: boolean): fc.Arbitrary<Mutation> =>
  fc.oneof(
    ...(hasBody
      ? [
          {
            weight: 6,
            arbitrary: fc.record({
              kind: fc.constant('field' as const),
              name: fc.oneof(
                { weight: 4, arbitrary: fc.constantFrom(...fields, ...bodyFieldNames) },
                { weight: 1, arbitrary: hostileText },
              ),
              json: hostileJsonText,
            }),
          },
          {
            weight: 1,
            arbitrary: fc.record({ kind: fc.constant('body' as const), text: hostileBody(undefined) }),
          },
        ]
      : []),
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('query' as const),
        name: fc.oneof(
          {
            weight: 6,
            arbitrary: fc.constantFrom('page', 'limit', 'sort', 'filter', 'starting_after', 'productId'),
          },
          { weight: 1, arbitrary: hostileText },
        ),
        value: hostileText,
      }),
    },
    ...(hasId
      ? [{ weight: 3, arbitrary: fc.record({ kind: fc.constant('id' as const), value: hostileText }) }]
      : []),
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('contentType' as const),
        value: fc.constantFrom(
          'application/json; charset=utf-16',
          'application/json; charset=latin1',
          'application/problem+json',
          'text/plain',
          'application/xml',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'APPLICATION/JSON',
          'application/json;;;',
          '',
        ),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('header' as const),
        name: fc.constantFrom(
          'idempotency-key',
          'accept',
          'accept-encoding',
          'x-forwarded-for',
          'x-forwarded-proto',
          'origin',
          'keyturn-sign',
          'x-request-id',
          'request-id',
          'if-none-match',
          'range',
        ),
        value: headerText,
      }),
    },
  )

/**
 * A valid request for `route` (from the shared catalogue when it has the route), with one or two
 * hostile changes, so most of it still passes and the hostile part reaches as deep as it can.
 */
function requestArbitrary(
  route: ServedRoute,
  trusted: { readonly fixture: RouteFixture; readonly credentials: readonly Credentials[] },
  hostile: { readonly fixture: RouteFixture; readonly credentials: readonly Credentials[] },
): fc.Arbitrary<GeneratedRequest> {
  const prefix = route.url.startsWith('/api/v0') ? '/api/v0' : '/v0'
  const path = route.url.slice(prefix.length)
  const known = apiRoutes.find((candidate) => candidate.method === route.method && candidate.path === path)
  const hasBody = route.method === 'POST' || route.method === 'PATCH'
  const hasId = path.includes('/:')
  // Trusted credentials reach only the sacrificial fixture; the protected one only hostile credentials.
  const scene = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        fixture: fc.constant(trusted.fixture),
        auth: fc.oneof(
          { weight: 4, arbitrary: fc.constant(trusted.credentials[0] as Credentials) },
          { weight: 3, arbitrary: fc.constantFrom(...trusted.credentials) },
        ),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        fixture: fc.constant(hostile.fixture),
        auth: fc.constantFrom(...hostile.credentials),
      }),
    },
  )
  return scene.chain(({ fixture, auth }) => {
    const validBody = known?.payload?.(fixture) ?? {}
    const fields = Object.keys(validBody)
    return fc.array(mutation(fields, hasBody, hasId), { minLength: 1, maxLength: 2 }).map((mutations) => {
      let body: string | undefined = hasBody ? JSON.stringify(validBody) : undefined
      let contentType = 'application/json'
      const query: string[] = []
      const headers: Record<string, string> = {}
      const segments = path.split('/')
      const idAt = segments.findIndex((segment) => segment.startsWith(':'))
      const realSegments = segments.map((segment, index) =>
        segment.startsWith(':') ? idFor(segments[index - 1] ?? '', fixture) : segment,
      )
      for (const change of mutations) {
        switch (change.kind) {
          case 'field':
            body = withField(validBody, change.name, change.json)
            break
          case 'body':
            body = change.text
            break
          case 'query':
            query.push(`${encode(change.name)}=${encode(change.value)}`)
            break
          case 'id':
            realSegments[idAt] = encode(change.value)
            break
          case 'contentType':
            contentType = change.value
            break
          case 'header':
            headers[change.name] = change.value
            break
        }
      }
      if (body !== undefined) {
        headers['content-type'] = contentType
      }
      return {
        method: route.method,
        url: `${prefix}${realSegments.join('/')}${query.length === 0 ? '' : `?${query.join('&')}`}`,
        headers: { ...headers, ...auth.headers },
        ...(body === undefined ? {} : { payload: body }),
      }
    })
  })
}

/** Every row of every table but the bookkeeping ones, as one digest: a refused request must not move it. */
async function digestData(
  connection: Connection,
): Promise<{ digest: string; tables: Record<string, string> }> {
  const tables = await tableDigests(connection)
  return { digest: createHash('sha256').update(JSON.stringify(tables)).digest('hex'), tables }
}

/** The protected product's resources as its admin reads them. */
async function readProtected(
  app: App,
  admin: Record<string, string>,
  fixture: RouteFixture,
): Promise<string[]> {
  const urls = [
    `/api/v0/products/${fixture.productId}`,
    `/api/v0/products/${fixture.productId}/keys`,
    `/api/v0/licenses?productId=${fixture.productId}&limit=100`,
    `/api/v0/licenses/${fixture.licenseId}`,
    `/api/v0/licenses/${fixture.licenseId}/activations`,
    `/api/v0/activations/${fixture.activationId}`,
    `/api/v0/api-keys/${fixture.apiKeyId}`,
  ]
  const bodies: string[] = []
  for (const url of urls) {
    const res = await app.inject({ method: 'GET', url, headers: admin })
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
    bodies.push(res.body)
  }
  return bodies
}

async function createKey(
  app: App,
  admin: Record<string, string>,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v0/api-keys', headers: admin, payload: body })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().secret
}

async function setUp(t: TestContext, database: Parameters<typeof buildTestApp>[1]) {
  const { app, headers, productId, connection } = await buildTestApp(t, database)
  const served = recordServedRoutes(app)
  await app.ready()
  const protectedFixture = await seedRouteFixture(app, headers, productId)
  const otherProductId = await createProduct(app, headers, 'Sacrificial Product')
  const fixture = await seedRouteFixture(app, headers, otherProductId)
  const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` })
  const productKey = bearer(
    await createKey(app, headers, { name: 'fuzz product', role: 'product', productId: otherProductId }),
  )
  const clientKey = bearer(
    await createKey(app, headers, { name: 'fuzz client', role: 'client', productId: otherProductId }),
  )
  const hostileCredentials: Credentials[] = [
    { name: 'none', headers: {} },
    { name: 'unknown key', headers: bearer('kt_admin_0000000000000000000000000000000000') },
    { name: 'not bearer', headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } },
    { name: 'empty bearer', headers: { authorization: 'Bearer ' } },
    { name: 'huge bearer', headers: bearer('k'.repeat(10_000)) },
    { name: "another product's key", headers: productKey },
    { name: "another product's client key", headers: clientKey },
  ]
  return {
    app,
    connection,
    admin: headers,
    served,
    protectedFixture,
    trusted: {
      fixture,
      credentials: [
        { name: 'admin', headers },
        { name: 'product', headers: productKey },
        { name: 'client', headers: clientKey },
        ...hostileCredentials.slice(0, 3),
      ],
    },
    hostile: { fixture: protectedFixture, credentials: hostileCredentials },
  }
}

function checkAnswer(
  request: GeneratedRequest,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
): void {
  const context =
    `${request.method} ${request.url} ${JSON.stringify(request.headers)} ${request.payload ?? ''}`.slice(
      0,
      2000,
    )
  assert.ok(res.statusCode < 500, `${res.statusCode} for ${context}: ${res.body}`)
  const requestId = String(res.headers['request-id'])
  assert.match(requestId, /^req_[0-9A-Za-z]{22}$/, context)
  for (const pattern of internalText) {
    assert.doesNotMatch(
      res.body,
      pattern,
      `internal text in the answer to ${context}: ${res.body.slice(0, 500)}`,
    )
  }
  if (res.statusCode >= 400) {
    assert.match(
      String(res.headers['content-type']),
      /^application\/problem\+json/,
      `${context}: ${res.body}`,
    )
    const problem = JSON.parse(res.body)
    assert.ok(
      (ErrorCodeSchema.enum as readonly string[]).includes(problem.code),
      `unknown code ${problem.code} for ${context}`,
    )
    assert.equal(problem.status, res.statusCode, res.body)
    assert.equal(problem.requestId, requestId, res.body)
  }
}

/** Tables a refused request is meant to change: what counts refusals to lock a resource. */
const countsRefusals: Record<string, string> = {
  offline_deactivation_locks: 'wrong deactivation codes in a row lock offline deactivation',
}

describeEachDatabase('hostile requests on every route', (database) => {
  it('answers every generated hostile request below 500 with problem details, and a refused one changes nothing', async (t) => {
    const scene = await setUp(t, database)
    const { app, connection, served } = scene
    assert.ok(served.length >= 50, `routes recorded: ${served.length}`)
    const protectedBefore = await readProtected(app, scene.admin, scene.protectedFixture)
    let data = await digestData(connection)
    let requests = 0

    for (const route of served) {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(route, scene.trusted, scene.hostile), async (request) => {
          const res = await app.inject({
            method: request.method as 'GET',
            url: request.url,
            headers: request.headers,
            ...(request.payload === undefined ? {} : { payload: request.payload }),
          })
          requests++
          checkAnswer(request, res)
          const after = await digestData(connection)
          if (res.statusCode >= 400) {
            const changed = Object.keys(after.tables).filter(
              (table) => after.tables[table] !== data.tables[table] && !(table in countsRefusals),
            )
            assert.deepEqual(
              changed,
              [],
              `a ${res.statusCode} changed data: ${request.method} ${request.url}`,
            )
          }
          data = after
        }),
        { numRuns: runsPerRoute, ...(seed === undefined ? {} : { seed }), endOnFailure: true },
      )
    }

    assert.ok(requests >= served.length * runsPerRoute)
    assert.deepEqual(await readProtected(app, scene.admin, scene.protectedFixture), protectedBefore)
  })
})
