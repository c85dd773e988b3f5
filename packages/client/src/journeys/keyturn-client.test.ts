import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  KeyturnApiError,
  KeyturnClient,
  KeyturnConnectionError,
  type LicenseResource,
  type Paginated,
  validateLicenseToken,
} from '@keyturn/client'
import { testAdminSecret, testStart } from '@keyturn/server/testing/build-test-app'
import { describeEachDatabase, sqliteTestDatabase } from '@keyturn/server/testing/each-database'
import { closedPortUrl, serveHttp, startTestServer } from '@keyturn/server/testing/listening-app'
import { signedInOperator } from '@keyturn/server/testing/operators'

const at = testStart // the server's fixed clock
const second = 1000

/** The global fetch, recording each call's method, URL and the answer's Request-Id. */
function recordingFetch() {
  const calls: { method: string; url: string; status: number; requestId: string | null }[] = []
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const response = await globalThis.fetch(input, init)
    calls.push({
      method: init?.method ?? 'GET',
      url: String(input),
      status: response.status,
      requestId: response.headers.get('request-id'),
    })
    return response
  }
  return { fetch, calls }
}

/** Rejects unless the promise rejects with a KeyturnApiError of this status and code; returns the error. */
async function apiError(promise: Promise<unknown>, status: number, code: string): Promise<KeyturnApiError> {
  const error = await promise.then(
    (value) => assert.fail(`expected ${status} ${code}, resolved with ${JSON.stringify(value)}`),
    (error: unknown) => error,
  )
  assert.ok(error instanceof KeyturnApiError, `expected a KeyturnApiError, got ${String(error)}`)
  assert.deepEqual([error.status, error.code], [status, code], error.message)
  return error
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) {
    out.push(item)
  }
  return out
}

describeEachDatabase('KeyturnClient against a listening server', (database) => {
  it('creates, gets, updates, revokes, reinstates and validates a license', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })

    const created = await keyturn.createLicense({
      productId,
      maxActivations: 3,
      expirationDate: '2031-01-01T00:00:00.000Z',
    })
    const { id, key, ...rest } = created
    assert.match(id, /^lic_/)
    assert.match(key, /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){4}$/)
    assert.deepEqual(rest, {
      object: 'License',
      maxActivations: 3,
      status: 'active',
      expirationDate: '2031-01-01T00:00:00.000Z',
      createdAt: at,
      updatedAt: at,
      productId,
      statusDetails: { isRevoked: false, isExpired: false, determinedAt: at },
      activationCount: 0,
      heartbeatTtl: null,
      maxUses: null,
      uses: 0,
      usesResetAt: null,
      customerId: null,
      policyId: null,
      entitlements: [],
      metadata: {},
      externalId: null,
    })
    assert.deepEqual(await keyturn.getLicense(id), created)

    const updated = await keyturn.updateLicense(id, {
      maxActivations: null,
      expirationDate: '2032-06-01T00:00:00.000Z',
    })
    assert.deepEqual(updated, {
      ...created,
      maxActivations: null,
      expirationDate: '2032-06-01T00:00:00.000Z',
    })

    const revoked = await keyturn.revokeLicense(id)
    const revokedDetails = { isRevoked: true, isExpired: false, determinedAt: at }
    assert.deepEqual(revoked, { ...updated, status: 'revoked', statusDetails: revokedDetails })
    assert.deepEqual(await keyturn.revokeLicense(id), revoked, 'revoking twice changes nothing')

    // A revoked license is an answer, not an error: validateLicense resolves.
    const refused = await keyturn.validateLicense({ key, productId })
    assert.deepEqual(refused, { isValid: false, reason: 'revoked', timestamp: at, license: revoked })

    const reinstated = await keyturn.reinstateLicense(id)
    assert.deepEqual(reinstated, updated)
    const accepted = await keyturn.validateLicense({ key, productId })
    assert.deepEqual(accepted, { isValid: true, reason: null, timestamp: at, license: reinstated })
  })

  it('lists licenses with page, limit, sort and filter, in the paginated envelope', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })
    const licenses: LicenseResource[] = []
    for (const maxActivations of [5, 1, 3]) {
      licenses.push(await keyturn.createLicense({ productId, maxActivations }))
    }
    await keyturn.revokeLicense(licenses[1]?.id ?? assert.fail())

    const page = await keyturn.listLicenses({ sort: 'maxActivations:asc', limit: 2, page: 0 })
    assert.deepEqual(
      page.data.map((license) => license.maxActivations),
      [1, 3],
    )
    assert.deepEqual(
      { ...page, data: undefined },
      {
        data: undefined,
        totalCount: 3,
        page: 0,
        limit: 2,
        totalPages: 2,
        hasPrevPage: false,
        hasNextPage: true,
        prevPage: null,
        nextPage: 1,
      },
    )
    const active = await keyturn.listLicenses({ filter: 'status:eq:active', sort: 'maxActivations:desc' })
    assert.deepEqual(
      active.data.map((license) => license.maxActivations),
      [5, 3],
    )
    assert.equal(active.totalCount, 2)
    const empty = await keyturn.listLicenses({ productId: 'prd_doesNotExist' })
    assert.deepEqual([empty.data, empty.totalCount], [[], 0])
  })

  it('issues a license token that validates offline to its payload with the product public key', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })
    const license = await keyturn.createLicense({ productId, expirationDate: '2031-01-01T00:00:00.000Z' })

    const issued = await keyturn.createLicenseToken(license.id, { customPayload: { plan: 'pro' }, ttl: 3600 })
    const withoutBody = await keyturn.createLicenseToken(license.id)

    assert.deepEqual(issued.license, license)
    assert.deepEqual(issued.payload, {
      licenseId: license.id,
      expirationDate: '2030-01-01T01:00:00.000Z',
      productId,
      createdAt: at,
      customFields: { plan: 'pro' },
      entitlements: [],
    })
    assert.equal(
      withoutBody.payload.expirationDate,
      '2030-01-31T00:00:00.000Z',
      'the default lifetime is 30 days',
    )
    const { publicKey } = await keyturn.getProduct(productId)
    const result = await validateLicenseToken({
      productId,
      publicKey,
      token: issued.token,
      now: new Date(at),
    })
    assert.deepEqual(result, {
      licenseId: license.id,
      expiresAt: '2030-01-01T01:00:00.000Z',
      productId,
      customFields: { plan: 'pro' },
      issuedAt: at,
      entitlements: [],
    })
  })

  it('creates, gets, lists, updates, suspends and resumes products', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })

    const created = await keyturn.createProduct({ name: 'Photo Editor' })
    const { id, publicKey, publicKeyJwk, keyId, ...rest } = created
    assert.match(id, /^prd_/)
    assert.match(publicKey, /^-----BEGIN PUBLIC KEY-----\n/)
    assert.deepEqual(publicKeyJwk, {
      kty: 'OKP',
      crv: 'Ed25519',
      x: publicKeyJwk.x,
      kid: keyId,
      alg: 'EdDSA',
      use: 'sig',
    })
    assert.deepEqual(rest, {
      object: 'Product',
      name: 'Photo Editor',
      status: 'active',
      clientTokenTtl: 604800,
      signResponses: false,
      branding: {
        displayName: null,
        logoUrl: null,
        accentColor: null,
        supportEmail: null,
        supportUrl: null,
        portalUrl: null,
      },
      metadata: {},
      createdAt: at,
      updatedAt: at,
    })
    assert.deepEqual(await keyturn.getProduct(id), created)

    const renamed = await keyturn.updateProduct(id, { name: 'Photo Editor Pro' })
    assert.deepEqual(renamed, { ...created, name: 'Photo Editor Pro' })
    const license = await keyturn.createLicense({ productId: id })
    const suspended = await keyturn.suspendProduct(id)
    assert.deepEqual(suspended, { ...renamed, status: 'suspended' })
    await assert.rejects(keyturn.createLicense({ productId: id }), { code: 'product_suspended' })
    const validation = await keyturn.validateLicense({ key: license.key, productId: id })
    assert.deepEqual([validation.isValid, validation.reason], [false, 'suspended'])
    assert.deepEqual(await keyturn.resumeProduct(id), renamed)

    const list = await keyturn.listProducts({ sort: 'name:asc' })
    assert.deepEqual(
      list.data.map((product) => [product.id, product.name]),
      [
        [id, 'Photo Editor Pro'],
        [productId, 'Test Product'],
      ],
    )
    assert.equal(list.totalCount, 2)
  })

  it('manages customers, entitlements and policies, and renews a license made from a policy', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })

    const pdf = await keyturn.createEntitlement({ productId, code: 'pdf', name: 'PDF' })
    const policy = await keyturn.createPolicy({
      productId,
      name: 'Monthly',
      duration: 30 * 86_400,
      entitlements: ['pdf'],
    })
    const customer = await keyturn.createCustomer({ email: 'ada@example.com', metadata: { crm: 'c1' } })
    const license = await keyturn.createLicense({ productId, policyId: policy.id, customerId: customer.id })
    assert.deepEqual(
      [license.entitlements, license.expirationDate, license.customerId],
      [['pdf'], '2030-01-31T00:00:00.000Z', customer.id],
    )
    assert.deepEqual(await keyturn.getCustomer(customer.id), customer)
    assert.deepEqual((await keyturn.updateCustomer(customer.id, { metadata: { crm: null } })).metadata, {})
    assert.deepEqual(await keyturn.getPolicy(policy.id), policy)
    assert.deepEqual(await keyturn.getEntitlement(pdf.id), pdf)
    assert.equal((await keyturn.updateEntitlement(pdf.id, { name: 'Export' })).name, 'Export')
    assert.deepEqual((await keyturn.updatePolicy(policy.id, { entitlements: [] })).entitlements, [])
    assert.deepEqual(
      (await keyturn.listCustomers()).data.map((item) => item.id),
      [customer.id],
    )
    assert.deepEqual(
      (await keyturn.listPolicies({ productId })).data.map((item) => item.id),
      [policy.id],
    )
    const entitlements = []
    for await (const entitlement of keyturn.iterateEntitlements({ productId })) {
      entitlements.push(entitlement.code)
    }
    assert.deepEqual(entitlements, ['pdf'])

    const renewed = await keyturn.renewLicense(license.id, {}, { idempotencyKey: 'invoice-1' })
    const retried = await keyturn.renewLicense(license.id, {}, { idempotencyKey: 'invoice-1' })
    assert.equal(renewed.expirationDate, '2030-03-02T00:00:00.000Z')
    assert.deepEqual(retried, renewed)
    await assert.rejects(keyturn.deleteCustomer(customer.id), { code: 'customer_has_licenses' })
    // This server has no customer portal: no sign-in code can be mailed, and nobody is signed in.
    await assert.rejects(keyturn.sendPortalLink(customer.id), { code: 'portal_unavailable' })
    assert.deepEqual((await keyturn.listPortalSessions(customer.id)).data, [])
    await keyturn.revokePortalSession(customer.id, '0b9f7c2e-5a41-4f7e-9a0c-3d2b1e6f8a90')
    await assert.rejects(keyturn.deletePolicy(policy.id), { code: 'policy_in_use' })
    await keyturn.deleteEntitlement(pdf.id)
    await keyturn.updateLicense(license.id, { customerId: null })
    await keyturn.deleteCustomer(customer.id)
    await assert.rejects(keyturn.getCustomer(customer.id), { code: 'customer_not_found' })
  })

  it('lists product keys and rotates the signing key, keeping the retired one listed', async (t) => {
    const { baseUrl, productId, clock } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })
    const before = await keyturn.getProduct(productId)
    const license = await keyturn.createLicense({ productId })
    const oldToken = await keyturn.createLicenseToken(license.id)

    const keys = await keyturn.listProductKeys(productId)
    assert.deepEqual(keys.data, [
      {
        object: 'ProductKey',
        keyId: before.keyId,
        productId,
        publicKey: before.publicKey,
        publicKeyJwk: before.publicKeyJwk,
        isCurrent: true,
        createdAt: at,
        retiredAt: null,
      },
    ])

    clock.advance(60 * second)
    const rotatedAt = clock.now().toISOString()
    const rotated = await keyturn.rotateProductKey(productId)
    assert.notEqual(rotated.keyId, before.keyId)
    assert.deepEqual([rotated.isCurrent, rotated.retiredAt, rotated.createdAt], [true, null, rotatedAt])
    const after = await keyturn.getProduct(productId)
    assert.deepEqual([after.keyId, after.publicKey], [rotated.keyId, rotated.publicKey])

    const afterList = await keyturn.listProductKeys(productId, { limit: 10 })
    assert.equal(afterList.totalCount, 2)
    const retired = afterList.data.find((key) => key.keyId === before.keyId)
    assert.deepEqual([retired?.isCurrent, retired?.retiredAt], [false, rotatedAt])
    const newToken = await keyturn.createLicenseToken(license.id)
    const now = clock.now()
    const allKeys = afterList.data.map((key) => key.publicKey)
    for (const { token } of [oldToken, newToken]) {
      const result = await validateLicenseToken({ productId, publicKey: allKeys, token, now })
      assert.equal(result.licenseId, license.id)
    }
  })

  it('creates, gets, lists and deletes API keys; a product key sees only its product', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const admin = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })
    const other = await admin.createProduct({ name: 'Other' })
    const foreignLicense = await admin.createLicense({ productId: other.id })

    const created = await admin.createApiKey({ name: 'back end', role: 'product', productId })
    const { secret, ...stored } = created
    assert.match(secret, /^kt_prod_/)
    assert.match(stored.id, /^key_/)
    assert.equal(secret.startsWith(stored.prefix), true, `${stored.prefix} is not a prefix of the secret`)
    assert.deepEqual(
      { ...stored, id: undefined, prefix: undefined },
      {
        id: undefined,
        object: 'ApiKey',
        name: 'back end',
        role: 'product',
        productId,
        prefix: undefined,
        createdAt: at,
      },
    )
    assert.deepEqual(await admin.getApiKey(stored.id), stored)
    const list = await admin.listApiKeys({ filter: 'role:eq:product' })
    assert.deepEqual(list.data, [stored])
    assert.equal((await admin.listApiKeys()).totalCount, 2, 'the bootstrap admin key and the new one')

    const scoped = new KeyturnClient({ baseUrl, apiKey: secret })
    const own = await scoped.createLicense({ productId })
    assert.deepEqual(
      (await scoped.listLicenses()).data.map((license) => license.id),
      [own.id],
    )
    await apiError(scoped.getLicense(foreignLicense.id), 404, 'license_not_found')
    await apiError(scoped.listApiKeys(), 403, 'forbidden')

    assert.equal(await admin.deleteApiKey(stored.id), undefined)
    await apiError(admin.getApiKey(stored.id), 404, 'api_key_not_found')
    await apiError(scoped.listLicenses(), 401, 'unauthenticated')
  })

  it("lists, filters and gets events; a product key sees only its product's", async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const admin = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })
    const other = await admin.createProduct({ name: 'Other' })
    const license = await admin.createLicense({ productId })
    await admin.revokeLicense(license.id)
    await admin.createLicense({ productId: other.id })

    const revoked = await admin.listEvents({ filter: 'type:eq:license.revoked' })
    assert.equal(revoked.totalCount, 1)
    const [event] = revoked.data
    assert.ok(event)
    assert.deepEqual([event.type, event.productId, event.data.id], ['license.revoked', productId, license.id])
    assert.deepEqual(await admin.getEvent(event.id), event)
    const latest = await admin.listEvents({ limit: 1 })
    assert.equal(latest.data[0]?.productId, other.id, 'newest first')

    const { secret } = await admin.createApiKey({ name: 'scoped', role: 'product', productId })
    const scoped = new KeyturnClient({ baseUrl, apiKey: secret })
    const seen = await collect(scoped.iterateEvents())
    assert.ok(seen.length >= 2)
    assert.ok(
      seen.every((each) => each.productId === productId),
      JSON.stringify(seen.map((each) => each.productId)),
    )
  })

  it('walks every license, product, API key and activation exactly once, in list order, across several pages', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const { fetch, calls } = recordingFetch()
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret, fetch })
    for (let i = 0; i < 7; i++) {
      const license = await keyturn.createLicense({ productId, maxActivations: (i % 3) + 1 })
      await keyturn.activateLicense(license.id, { fingerprint: `machine-${i}` })
    }
    for (let i = 0; i < 4; i++) {
      await keyturn.createProduct({ name: `Product ${i}` })
      await keyturn.createApiKey({ name: `key ${i}`, role: 'admin' })
    }

    const cases: { all: Paginated<{ id: string }>; walk: () => AsyncIterable<{ id: string }> }[] = [
      { all: await keyturn.listLicenses({ limit: 100 }), walk: () => keyturn.iterateLicenses({ limit: 2 }) },
      {
        all: await keyturn.listLicenses({ limit: 100, sort: 'maxActivations:asc' }),
        walk: () => keyturn.iterateLicenses({ limit: 3, sort: 'maxActivations:asc' }),
      },
      { all: await keyturn.listProducts({ limit: 100 }), walk: () => keyturn.iterateProducts({ limit: 2 }) },
      { all: await keyturn.listApiKeys({ limit: 100 }), walk: () => keyturn.iterateApiKeys({ limit: 2 }) },
      {
        all: await keyturn.listAllActivations({ limit: 100, productId }),
        walk: () => keyturn.iterateAllActivations({ limit: 3, productId }),
      },
    ]
    for (const { all, walk } of cases) {
      const callsBefore = calls.length
      const walked = (await collect(walk())).map((item) => item.id)
      assert.deepEqual(
        walked,
        all.data.map((item) => item.id),
      )
      assert.ok(calls.length - callsBefore >= 3, 'the walk took several pages')
    }
    assert.deepEqual(
      cases.map(({ all }) => all.totalCount),
      [7, 7, 5, 5, 7],
    )
    const filtered = await collect(keyturn.iterateLicenses({ limit: 1, filter: 'maxActivations:eq:1' }))
    assert.deepEqual(
      filtered.map((license) => license.maxActivations),
      [1, 1, 1],
    )
  })

  it('walks every license exactly once when a license is created during the walk', async (t) => {
    const { baseUrl, productId, clock } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })
    const created: string[] = []
    for (let i = 0; i < 7; i++) {
      clock.advance(second) // distinct createdAt: the walk's order is creation order
      created.push((await keyturn.createLicense({ productId })).id)
    }

    for (const order of ['asc', 'desc'] as const) {
      const walked: string[] = []
      let inserted: string | undefined
      for await (const license of keyturn.iterateLicenses({ limit: 2, sort: `createdAt:${order}` })) {
        walked.push(license.id)
        if (inserted === undefined) {
          clock.advance(second) // the newest of all: last when ascending, first (already passed) when descending
          inserted = (await keyturn.createLicense({ productId })).id
        }
      }
      // Ascending, the new license comes at the end; descending, before the cursor, so it is not
      // walked, and (unlike page offsets) no license shifts into the next page to be walked twice.
      const expected = order === 'asc' ? [...created, inserted] : [...created].reverse()
      assert.deepEqual(walked, expected, `createdAt:${order}`)
      created.push(inserted ?? assert.fail('nothing was walked'))
    }
  })

  it('rejects a 404 with KeyturnApiError carrying status, code, detail and the Request-Id', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const { fetch, calls } = recordingFetch()
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret, fetch })

    const error = await apiError(keyturn.getLicense('lic_doesNotExist'), 404, 'license_not_found')

    assert.equal(error.name, 'KeyturnApiError')
    assert.ok(error instanceof Error)
    assert.match(error.detail, /lic_doesNotExist|not found/i)
    assert.match(error.requestId ?? '', /^req_/)
    assert.equal(error.requestId, calls.at(-1)?.requestId, 'the body and the Request-Id header agree')
    assert.deepEqual(error.errors, [])
    assert.equal(error.problem.type.length > 0, true)
    assert.equal(error.message, `license_not_found: ${error.detail}`)
    const unknownKey = keyturn.validateLicense({ key: 'AAAAA-AAAAA-AAAAA-AAAAA-AAAAA', productId })
    await apiError(unknownKey, 404, 'license_not_found')
    await apiError(keyturn.getProduct('prd_doesNotExist'), 404, 'product_not_found')
  })

  it('rejects a 400 with the field errors', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret })

    const schema = await apiError(
      keyturn.createLicense({ productId, maxActivations: 0 }),
      400,
      'validation_failed',
    )
    assert.deepEqual(
      schema.errors.map((fieldError) => fieldError.pointer),
      ['#/maxActivations'],
    )
    assert.match(schema.requestId ?? '', /^req_/)

    const past = keyturn.createLicense({ productId, expirationDate: '2029-12-31T00:00:00.000Z' })
    const pastError = await apiError(past, 400, 'validation_failed')
    assert.deepEqual(
      pastError.errors.map((fieldError) => fieldError.pointer),
      ['#/expirationDate'],
    )
    const filter = await apiError(keyturn.listLicenses({ filter: 'colour:eq:red' }), 400, 'invalid_filter')
    assert.match(filter.detail, /colour/)
  })

  it('rejects a bad API key with 401 unauthenticated', async (t) => {
    const { baseUrl } = await startTestServer(t, database)
    const keyturn = new KeyturnClient({ baseUrl, apiKey: 'kt_admin_not-a-real-key' })

    const error = await apiError(keyturn.listLicenses(), 401, 'unauthenticated')

    assert.match(error.requestId ?? '', /^req_/)
  })

  it('sends every request through the injected fetch', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)
    const { fetch, calls } = recordingFetch()
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret, fetch })

    const license = await keyturn.createLicense({ productId })
    await keyturn.getLicense(license.id)
    await keyturn.listLicenses({ limit: 5, sort: 'key:asc' })

    assert.deepEqual(
      calls.map(({ method, url, status }) => [method, url, status]),
      [
        ['POST', `${baseUrl}/api/v0/licenses`, 201],
        ['GET', `${baseUrl}/api/v0/licenses/${license.id}`, 200],
        ['GET', `${baseUrl}/api/v0/licenses?limit=5&sort=key%3Aasc`, 200],
      ],
    )
  })

  it('accepts a baseUrl with a trailing slash or ending in /api/v0', async (t) => {
    const { baseUrl, productId } = await startTestServer(t, database)

    for (const variant of [`${baseUrl}/`, `${baseUrl}/api/v0`, `${baseUrl}/api/v0/`, `${baseUrl}//`]) {
      const { fetch, calls } = recordingFetch()
      const keyturn = new KeyturnClient({ baseUrl: variant, apiKey: testAdminSecret, fetch })
      const product = await keyturn.getProduct(productId)
      assert.equal(product.id, productId, variant)
      assert.deepEqual(
        calls.map((call) => call.url),
        [`${baseUrl}/api/v0/products/${productId}`],
        variant,
      )
    }
  })
})

describe('KeyturnClient without a Keyturn server', () => {
  it('rejects with KeyturnConnectionError when nothing listens at the address', async () => {
    const baseUrl = await closedPortUrl()
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret, sleep: async () => undefined })

    await assert.rejects(keyturn.listLicenses(), (error: unknown) => {
      assert.ok(error instanceof KeyturnConnectionError, String(error))
      assert.equal(error.name, 'KeyturnConnectionError')
      assert.match(error.message, new RegExp(baseUrl.replace(/\./g, '\\.')))
      assert.ok(error.cause !== undefined, 'the fetch error is kept as the cause')
      return true
    })
  })

  it('rejects with KeyturnConnectionError when the connection drops in the middle of the body', async (t) => {
    const baseUrl = await serveHttp(t, (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' })
      response.write('{"data": [', () => response.destroy())
    })
    const keyturn = new KeyturnClient({ baseUrl, apiKey: testAdminSecret, sleep: async () => undefined })

    await assert.rejects(keyturn.listLicenses(), KeyturnConnectionError)
  })
})

describe('KeyturnClient in cookie mode (a signed-in operator, as the dashboard)', () => {
  it('sends no API key and no Idempotency-Key, the CSRF token on writes only, with same-origin credentials', async (t) => {
    const test = await startTestServer(t, sqliteTestDatabase())
    const operator = await signedInOperator(test, 'admin')
    const sent: { method: string; headers: Record<string, string>; credentials: unknown }[] = []
    // Node's fetch keeps no cookies: this one adds the session cookie as a browser would.
    const fetch: typeof globalThis.fetch = (input, init) => {
      const headers = { ...(init?.headers as Record<string, string>) }
      sent.push({ method: init?.method ?? 'GET', headers, credentials: init?.credentials })
      return globalThis.fetch(input, { ...init, headers: { ...headers, cookie: operator.read.cookie } })
    }
    const keyturn = new KeyturnClient({
      baseUrl: test.baseUrl,
      operatorSession: { csrfToken: operator.write['x-keyturn-csrf'] },
      fetch,
    })

    const created = await keyturn.createLicense({ productId: test.productId })
    const listed = await keyturn.listLicenses({ productId: test.productId })

    assert.equal(listed.data[0]?.id, created.id)
    assert.deepEqual(
      sent.map(({ method, headers, credentials }) => ({
        method,
        credentials,
        authorization: headers.authorization,
        csrf: headers['x-keyturn-csrf'] === operator.write['x-keyturn-csrf'],
        idempotencyKey: headers['idempotency-key'],
      })),
      [
        {
          method: 'POST',
          credentials: 'same-origin',
          authorization: undefined,
          csrf: true,
          idempotencyKey: undefined,
        },
        {
          method: 'GET',
          credentials: 'same-origin',
          authorization: undefined,
          csrf: false,
          idempotencyKey: undefined,
        },
      ],
    )
    assert.throws(() => new KeyturnClient({ baseUrl: test.baseUrl }), /either apiKey or operatorSession/)
    assert.throws(
      () =>
        new KeyturnClient({
          baseUrl: test.baseUrl,
          apiKey: testAdminSecret,
          operatorSession: { csrfToken: 'x' },
        }),
      /either apiKey or operatorSession/,
    )
  })
})
