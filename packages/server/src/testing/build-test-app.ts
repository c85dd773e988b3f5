import { after } from 'node:test'
import type { ProductId } from '@keyturn/protocol'
import type { Kysely } from 'kysely'
import { type AppDeps, buildApp, type Services } from '../app.js'
import type { AdminKeyPrincipal } from '../core/principal.js'
import { deriveSecretKeys } from '../core/secrets.js'
import type { App } from '../http/app-types.js'
import { CompiledSchemas } from '../http/schema-compilers.js'
import type { IdempotencyStore } from '../idempotency/idempotency-store.js'
import type { Connection } from '../storage/connect.js'
import type { Database } from '../storage/database.js'
import type { TestDatabase } from './each-database.js'
import { FixedClock } from './fixed-clock.js'

/**
 * One cache of compiled route schemas for every app of a test process, compiled lazily (on a
 * route's first request): apps build in a fraction of the time.
 */
export const testCompiledSchemas = new CompiledSchemas({ lazy: true })

export const testAdminSecret = 'kt_admin_test-secret-for-the-test-suite-0001'
/** buildTestApp's clock starts here. */
export const testStart = '2030-01-01T00:00:00.000Z'

/** The keys every test app derives from its master secret (a test may encrypt as the app does). */
export const testSecretKeys = deriveSecretKeys('test-master-secret-with-at-least-32-characters')

export interface TestApp {
  readonly app: App
  readonly services: Services
  readonly clock: FixedClock
  readonly connection: Connection
  /** An admin key's Authorization header. */
  readonly headers: { authorization: string }
  readonly admin: AdminKeyPrincipal
  /** A product created for the test. */
  readonly productId: ProductId
}

/** Ports a test may replace (faults are injected through ports, never through production code). */
export interface TestAppOptions
  extends Pick<
    AppDeps,
    'protection' | 'trustProxy' | 'corsOrigins' | 'httpTimeouts' | 'mail' | 'portal' | 'oidc' | 'publicUrl'
  > {
  readonly idempotencyStore?: (db: Kysely<Database>) => IdempotencyStore
  readonly recordValidations?: boolean
  /** KEYTURN_WEBHOOK_ALLOW_HTTP / _PRIVATE (a loopback receiver needs both). */
  readonly webhooks?: { readonly allowHttp: boolean; readonly allowPrivate: boolean }
}

/** Where a test app registers its closing: a test's context (`t`), or a suite's (suiteTestApp). */
export interface CleanupScope {
  after(cleanup: () => unknown): void
}

/** A real app on a fresh migrated database, with an admin key, a product and a fixed clock; closed after the test. */
export async function buildTestApp(
  t: CleanupScope,
  database: TestDatabase,
  options: TestAppOptions = {},
): Promise<TestApp> {
  const connection = await database.open()
  const clock = new FixedClock(testStart)
  const { app, services } = buildApp({
    db: connection.db,
    clock,
    secretKeys: testSecretKeys,
    logger: false,
    ...(options.idempotencyStore === undefined
      ? {}
      : { idempotencyStore: options.idempotencyStore(connection.db) }),
    ...(options.recordValidations === undefined ? {} : { recordValidations: options.recordValidations }),
    compiledSchemas: testCompiledSchemas,
    ...(options.protection === undefined ? {} : { protection: options.protection }),
    ...(options.trustProxy === undefined ? {} : { trustProxy: options.trustProxy }),
    ...(options.corsOrigins === undefined ? {} : { corsOrigins: options.corsOrigins }),
    ...(options.webhooks === undefined ? {} : { webhooks: options.webhooks }),
    ...(options.mail === undefined ? {} : { mail: options.mail }),
    ...(options.portal === undefined ? {} : { portal: options.portal }),
    ...(options.oidc === undefined ? {} : { oidc: options.oidc }),
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    ...(options.httpTimeouts === undefined ? {} : { httpTimeouts: options.httpTimeouts }),
  })
  t.after(async () => {
    await app.close()
    await connection.close()
  })
  await services.apiKeys.bootstrapAdmin(testAdminSecret)
  const admin = await services.apiKeys.authenticate(testAdminSecret)
  if (admin?.role !== 'admin') {
    throw new Error('the test admin key does not authenticate')
  }
  const product = await services.products.create(admin, { name: 'Test Product' })
  return {
    app,
    services,
    clock,
    connection,
    headers: { authorization: `Bearer ${testAdminSecret}` },
    admin,
    productId: product.product.id,
  }
}

/**
 * One buildTestApp for the tests of a suite that only read its state or add to it without relying
 * on a fresh database: built by the first test that asks, closed after the suite. Call it inside
 * describe() (it registers the suite's `after` hook).
 */
export function suiteTestApp(database: TestDatabase, options: TestAppOptions = {}): () => Promise<TestApp> {
  let built: Promise<TestApp> | undefined
  const cleanups: (() => unknown)[] = []
  after(async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup()
    }
  })
  return () => {
    built ??= buildTestApp({ after: (cleanup) => cleanups.push(cleanup) }, database, options)
    return built
  }
}

/** Creates a product key over HTTP and returns its Authorization header. */
export async function productKeyHeaders(app: App, admin: { authorization: string }, productId: ProductId) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v0/api-keys',
    headers: admin,
    payload: { name: 'product key', role: 'product', productId },
  })
  if (res.statusCode !== 201) {
    throw new Error(`creating a product key failed: ${res.body}`)
  }
  return { authorization: `Bearer ${res.json().secret}` }
}

/** Creates a product over HTTP and returns its id. */
export async function createProduct(
  app: App,
  admin: { authorization: string },
  name = 'Other Product',
): Promise<ProductId> {
  const res = await app.inject({ method: 'POST', url: '/api/v0/products', headers: admin, payload: { name } })
  if (res.statusCode !== 201) {
    throw new Error(`creating a product failed: ${res.body}`)
  }
  return res.json().id
}
