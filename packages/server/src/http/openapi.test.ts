import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { type ErrorCode, problemType } from '@keyturn/protocol'
import { Validator } from '@seriousme/openapi-schema-validator'
import { importSPKI, jwtVerify } from 'jose'
import { documentedOidc } from '../entry/openapi-json.js'
import { openApiJson } from '../main.js'
import { buildTestApp } from '../testing/build-test-app.js'
import { sqliteTestDatabase } from '../testing/each-database.js'

const committedPath = new URL('../../../protocol/openapi.json', import.meta.url)
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

interface MediaType {
  schema?: unknown
  example?: unknown
  examples?: Record<string, unknown>
}
interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  description?: string
  security?: Record<string, string[]>[]
  parameters?: Record<string, unknown>[]
  requestBody?: { required?: boolean; content?: Record<string, MediaType> }
  responses?: Record<string, { content?: Record<string, MediaType> }>
}
interface Document {
  openapi: string
  paths: Record<string, Partial<Record<(typeof methods)[number], Operation>>>
  components?: {
    securitySchemes?: Record<string, unknown>
    schemas?: Record<string, unknown>
    examples?: Record<string, unknown>
  }
  security?: unknown[]
  tags?: { name: string }[]
}

const generated = await openApiJson()
const document = JSON.parse(generated) as Document // produced by JSON.stringify just above

function operations(): { name: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    methods.flatMap((method) => {
      const operation = item[method]
      return operation === undefined ? [] : [{ name: `${method.toUpperCase()} ${path}`, operation }]
    }),
  )
}

function hasExample(media: MediaType | undefined): boolean {
  return media !== undefined && (media.example !== undefined || Object.keys(media.examples ?? {}).length > 0)
}

describe('the OpenAPI document', () => {
  it('matches the committed packages/protocol/openapi.json', () => {
    const committed = readFileSync(committedPath, 'utf8')
    if (committed === generated) {
      return
    }
    const committedLines = committed.split('\n')
    const generatedLines = generated.split('\n')
    const line = generatedLines.findIndex((text, index) => text !== committedLines[index])
    const ids = (json: string) =>
      new Set([...json.matchAll(/"operationId": "([^"]+)"/g)].map(([, id]) => id ?? ''))
    const [now, then] = [ids(generated), ids(committed)]
    assert.fail(
      [
        'packages/protocol/openapi.json is out of date: run `npm run openapi` and commit the result.',
        `Operations added: ${[...now].filter((id) => !then.has(id)).join(', ') || 'none'}.`,
        `Operations removed: ${[...then].filter((id) => !now.has(id)).join(', ') || 'none'}.`,
        `First difference, line ${line + 1}:`,
        `  committed: ${committedLines[line] ?? '(end of file)'}`,
        `  generated: ${generatedLines[line] ?? '(end of file)'}`,
      ].join('\n'),
    )
  })

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(JSON.parse(generated))

    assert.equal(document.openapi, '3.1.0')
    assert.deepEqual(result.errors, undefined)
    assert.equal(result.valid, true)
  })

  it('gives every operation an operationId, a summary, a known tag, a 4xx response and examples', () => {
    const tags = new Set(document.tags?.map((tag) => tag.name))
    const problems = operations().flatMap(({ name, operation }) => {
      const found: string[] = []
      if (!operation.operationId) {
        found.push('no operationId')
      }
      if (!operation.summary) {
        found.push('no summary')
      }
      if (!operation.tags?.length || !operation.tags.every((tag) => tags.has(tag))) {
        found.push('no tag, or one the document does not list')
      }
      const statuses = Object.keys(operation.responses ?? {})
      if (!statuses.some((status) => status.startsWith('4'))) {
        found.push('no 4xx response')
      }
      const body = operation.requestBody?.content?.['application/json']
      if (operation.requestBody !== undefined && !hasExample(body)) {
        found.push('no request body example')
      }
      for (const status of statuses.filter((status) => status.startsWith('2'))) {
        const content = operation.responses?.[status]?.content
        if (content !== undefined && !hasExample(content['application/json'])) {
          found.push(`no example for the ${status} response`)
        }
      }
      return found.map((problem) => `${name}: ${problem}`)
    })

    assert.ok(operations().length > 0)
    assert.deepEqual(problems, [])
  })

  it('names each operation once, under /api/v0 only (no /v0 duplicates)', () => {
    const ids = operations().map(({ operation }) => operation.operationId)

    assert.equal(new Set(ids).size, ids.length, ids.join(', '))
    for (const path of Object.keys(document.paths)) {
      assert.doesNotMatch(path, /^\/(api\/)?v0\//, 'paths are relative to the server URL /api/v0')
      assert.doesNotMatch(path, /^\/(healthz|readyz|metrics|openapi\.json|docs)/)
    }
  })

  it('lists the dashboard’s sign-in routes at /operator from the server’s root, open or with the session cookie and CSRF header', () => {
    const rootPaths = Object.entries(document.paths).filter(([path]) => path.startsWith('/operator/'))
    const ids = rootPaths.flatMap(([, item]) =>
      methods.flatMap((method) => (item[method] === undefined ? [] : [item[method]?.operationId])),
    )
    for (const id of [
      'signInOperator',
      'signOutOperator',
      'completeOperatorSetup',
      'acceptOperatorInvitation',
    ]) {
      assert.ok(ids.includes(id), id)
    }
    for (const id of [
      'requestOperatorPasswordReset',
      'resetOperatorPassword',
      'verifyOperatorSecondFactor',
    ]) {
      assert.ok(ids.includes(id), id)
    }
    assert.ok(ids.includes('startOperatorSso') && ids.includes('finishOperatorSso'), 'single sign-on too')
    for (const [path, item] of rootPaths) {
      assert.deepEqual(
        (item as { servers?: { url: string }[] }).servers?.map((server) => server.url),
        ['/'],
        `${path} is served from the root, not /api/v0`,
      )
      for (const method of methods) {
        const operation = item[method]
        if (operation === undefined) {
          continue
        }
        assert.deepEqual(operation.tags, ['operator-sign-in'], `${method} ${path}`)
        const csrf = operation.parameters?.find((parameter) => parameter.name === 'x-keyturn-csrf')
        const session = (operation.security ?? []).some((entry) => 'operatorSession' in entry)
        assert.equal(
          csrf?.required,
          method !== 'get' && session ? true : undefined,
          `${method} ${path}: the CSRF header on the writes of a session`,
        )
      }
    }
    assert.deepEqual(document.paths['/operator/sign-in']?.post?.security, [])
    assert.deepEqual(Object.keys(document.paths['/operator/oidc/start']?.get?.responses ?? {}).sort(), [
      '302',
      '400',
      '401',
      '403',
      '429',
    ])
    assert.equal(document.paths['/operator/sign-in']?.post?.parameters, undefined)
    const others = Object.keys(document.paths).filter((path) => !path.startsWith('/operator/'))
    assert.ok(others.every((path) => (document.paths[path] as { servers?: unknown }).servers === undefined))
  })

  it('requires a bearer API key or the operator session cookie', () => {
    assert.deepEqual(document.components?.securitySchemes?.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      description: 'An API key: `Authorization: Bearer kt_…`',
    })
    assert.deepEqual(
      { ...(document.components?.securitySchemes?.operatorSession as object), description: undefined },
      { type: 'apiKey', in: 'cookie', name: 'keyturn_operator_session', description: undefined },
    )
    assert.deepEqual(document.security, [{ bearerAuth: [] }, { operatorSession: [] }])
    assert.deepEqual(document.paths['/operators']?.get?.security, [{ operatorSession: [] }])
    assert.match(
      String(document.paths['/licenses/{id}/revoke']?.post?.description),
      /Operators: support or above\.$/,
    )
  })

  it('shows an example token that verifies with the example product key', async () => {
    const example = (path: string, method: 'get' | 'post', status: string) =>
      document.paths[path]?.[method]?.responses?.[status]?.content?.['application/json']?.example as
        | Record<string, unknown>
        | undefined // the examples come from the protocol schemas
    const product = example('/products/{id}', 'get', '200')
    const issued = example('/licenses/{id}/tokens', 'post', '201')
    assert.ok(typeof product?.publicKey === 'string' && typeof issued?.token === 'string')

    const key = await importSPKI(product.publicKey, 'EdDSA')
    const { payload } = await jwtVerify(issued.token, key, {
      typ: 'license+jwt',
      audience: product.id as string,
      currentDate: new Date('2030-01-02T00:00:00Z'),
    })

    const { licenseId, productId, expirationDate, createdAt, customFields } = payload
    assert.deepEqual({ licenseId, productId, expirationDate, createdAt, customFields }, issued.payload)
  })

  it('describes every error response as application/problem+json', () => {
    const wrong = operations().flatMap(({ name, operation }) =>
      Object.entries(operation.responses ?? {})
        .filter(([status, response]) => Number(status) >= 400 && response.content !== undefined)
        .filter(([, response]) => Object.keys(response.content ?? {}).join() !== 'application/problem+json')
        .map(([status]) => `${name} ${status}`),
    )

    assert.deepEqual(wrong, [])
  })
})

describe('the OpenAPI components', () => {
  const find = (id: string) => operations().find(({ operation }) => operation.operationId === id)?.operation

  it('names the wire shapes and references them, so generators make License-named types', () => {
    const schemaOf = (id: string, status: string, media = 'application/json') =>
      find(id)?.responses?.[status]?.content?.[media]?.schema

    for (const name of [
      'License',
      'LicenseList',
      'Product',
      'ProductList',
      'ApiKey',
      'ApiKeyList',
      'Activation',
      'ActivationList',
      'Problem',
      'ValidationResult',
      'LicenseToken',
      'CreateLicenseBody',
    ]) {
      assert.ok(document.components?.schemas?.[name], `no component ${name}`)
    }
    assert.deepEqual(schemaOf('getLicense', '200'), { $ref: '#/components/schemas/License' })
    assert.deepEqual(schemaOf('listLicenses', '200'), { $ref: '#/components/schemas/LicenseList' })
    assert.deepEqual(schemaOf('getLicense', '404', 'application/problem+json'), {
      $ref: '#/components/schemas/Problem',
    })
    assert.deepEqual(find('createLicense')?.requestBody?.content?.['application/json']?.schema, {
      $ref: '#/components/schemas/CreateLicenseBody',
    })
    const validation = document.components?.schemas?.ValidationResult as { properties: { license: unknown } }
    assert.deepEqual(validation.properties.license, { $ref: '#/components/schemas/License' })
  })

  it('declares the problem schema once instead of inlining it in every response', () => {
    // `errors` is the problem's own property (events also carry a `requestId`): no operation
    // inlines it, and the components declare it once (beside the batch import's per-row problem).
    const problemProperties = '"errors": {'
    assert.equal(JSON.stringify(document.paths, null, 2).split(problemProperties).length - 1, 0)
    assert.ok(JSON.stringify(document.components?.schemas?.Problem).includes('"errors":{'))
    // Event examples and webhook shapes ride along. Inlined schemas cost tens of KB an operation; with components one takes about 10 KB.
    const perOperation = generated.length / operations().length
    assert.ok(
      perOperation < 13_000,
      `the document is ${generated.length} bytes, ${Math.round(perOperation)} an operation`,
    )
  })

  it('gives each error response one example per code it lists, carrying its own status and code', () => {
    const wrong: string[] = []
    for (const { name, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (Number(status) < 400) {
          continue
        }
        const media = response.content?.['application/problem+json']
        const examples = Object.entries(media?.examples ?? {})
        if (examples.length === 0 || media?.example !== undefined) {
          wrong.push(`${name} ${status}: no examples per code`)
        }
        for (const [code, example] of examples) {
          const ref = (example as { $ref: string }).$ref.replace('#/components/examples/', '')
          const shared = document.components?.examples?.[ref] as
            | { value?: Record<string, unknown> }
            | undefined
          const value = shared?.value ?? {}
          if (
            value.status !== Number(status) ||
            value.code !== code ||
            value.type !== problemType(code as ErrorCode)
          ) {
            wrong.push(`${name} ${status}: example ${code} says ${value.status} ${value.code}`)
          }
        }
      }
    }

    assert.deepEqual(wrong, [])
  })

  it('documents 403 where a role may not call, and 413 and 415 where a body is read', () => {
    const statuses = (id: string) => Object.keys(find(id)?.responses ?? {})

    for (const id of ['getLicense', 'revokeLicense', 'createProduct', 'listApiKeys', 'createLicenseToken']) {
      assert.ok(statuses(id).includes('403'), id)
    }
    assert.ok(!statuses('validateLicense').includes('403'), 'every role may validate')
    for (const id of ['createLicense', 'updateLicense', 'revokeLicense', 'validateLicense']) {
      assert.ok(statuses(id).includes('413') && statuses(id).includes('415'), id)
    }
    assert.ok(!statuses('getLicense').includes('415'))
  })

  it('pre-fills no parameter and requires no body of a bodiless action', () => {
    const prefilled = operations().flatMap(({ name, operation }) =>
      (operation.parameters ?? [])
        .filter((parameter) => 'example' in parameter || 'examples' in parameter)
        .map((parameter) => `${name} ${String(parameter.name)}`),
    )

    assert.deepEqual(prefilled, [])
    assert.equal(find('createLicenseToken')?.requestBody?.required, false)
    assert.equal(find('revokeLicense')?.requestBody, undefined)
    assert.equal(find('createLicense')?.requestBody?.required, true)
  })
})

describe('GET /openapi.json and /docs', () => {
  it('serve the same document and the interactive reference', async (t) => {
    // With single sign-on set up, as the committed document is (its routes exist only then).
    const { app } = await buildTestApp(t, sqliteTestDatabase(), { oidc: documentedOidc })

    const json = await app.inject({ method: 'GET', url: '/openapi.json' })
    const docs = await app.inject({ method: 'GET', url: '/docs/' })

    assert.equal(json.statusCode, 200, json.body)
    assert.deepEqual(json.json(), JSON.parse(generated))
    assert.equal(docs.statusCode, 200)
    assert.match(String(docs.headers['content-type']), /^text\/html/)
    assert.match(docs.body, /<title>Keyturn API reference<\/title>/)
    assert.doesNotMatch(docs.body, /https?:\/\/(?!127\.0\.0\.1)[a-z]/i, 'no script or style from a CDN')
  })
})
