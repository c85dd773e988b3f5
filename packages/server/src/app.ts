import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify'
import type { Kysely } from 'kysely'
import { ActivationService } from './activations/activation-service.js'
import { ActivationStatementGroups } from './activations/kysely-activation-statement-groups.js'
import { KyselyActivationStore } from './activations/kysely-activation-store.js'
import { registerActivateLicense } from './activations/routes/activate-license.js'
import { registerActivateLicenseByKey } from './activations/routes/activate-license-by-key.js'
import { registerDeactivateLicenseByKey } from './activations/routes/deactivate-license-by-key.js'
import { registerDeleteActivation } from './activations/routes/delete-activation.js'
import { registerGetActivation } from './activations/routes/get-activation.js'
import { registerHeartbeatActivation } from './activations/routes/heartbeat-activation.js'
import { registerHeartbeatLicenseByKey } from './activations/routes/heartbeat-license-by-key.js'
import { registerListActivations } from './activations/routes/list-activations.js'
import { registerListAllActivations } from './activations/routes/list-all-activations.js'
import { ApiKeyService } from './api-keys/api-key-service.js'
import { KyselyApiKeyStore } from './api-keys/kysely-api-key-store.js'
import { registerCreateApiKey } from './api-keys/routes/create-api-key.js'
import { registerDeleteApiKey } from './api-keys/routes/delete-api-key.js'
import { registerGetApiKey } from './api-keys/routes/get-api-key.js'
import { registerGetCurrentApiKey } from './api-keys/routes/get-current-api-key.js'
import { registerListApiKeys } from './api-keys/routes/list-api-keys.js'
import type { ActivationCheck } from './core/activation-check.js'
import type { Clock } from './core/clock.js'
import { newId } from './core/ids.js'
import type { SecretKeys } from './core/secrets.js'
import { CustomerService } from './customers/customer-service.js'
import { KyselyCustomerStore } from './customers/kysely-customer-store.js'
import { registerCreateCustomer } from './customers/routes/create-customer.js'
import { registerDeleteCustomer } from './customers/routes/delete-customer.js'
import { registerGetCustomer } from './customers/routes/get-customer.js'
import { registerListCustomers } from './customers/routes/list-customers.js'
import { registerUpdateCustomer } from './customers/routes/update-customer.js'
import { EntitlementService } from './entitlements/entitlement-service.js'
import { KyselyEntitlementStore } from './entitlements/kysely-entitlement-store.js'
import { registerCreateEntitlement } from './entitlements/routes/create-entitlement.js'
import { registerDeleteEntitlement } from './entitlements/routes/delete-entitlement.js'
import { registerGetEntitlement } from './entitlements/routes/get-entitlement.js'
import { registerListEntitlements } from './entitlements/routes/list-entitlements.js'
import { registerUpdateEntitlement } from './entitlements/routes/update-entitlement.js'
import { EventRetention } from './events/event-retention.js'
import { EventService } from './events/event-service.js'
import { KyselyEventStore } from './events/kysely-event-store.js'
import { registerGetEvent } from './events/routes/get-event.js'
import { registerListEvents } from './events/routes/list-events.js'
import { ValidationRecording } from './events/validation-recording.js'
import type { App } from './http/app-types.js'
import { authenticate, forgetGoneKeys } from './http/authenticate.js'
import {
  handleClientError,
  refuseConnect,
  refuseUnreadableRequests,
  serveAllExpectations,
} from './http/client-errors.js'
import { closeConnectionsWhenClosing } from './http/closing.js'
import { dashboardPath, registerDashboard } from './http/dashboard.js'
import { handleError, handleFrameworkError, notFoundHandler } from './http/error-handler.js'
import { registerJsonBodyParser } from './http/json-body.js'
import { registerRequestLog } from './http/logger.js'
import { registerMetrics } from './http/metrics.js'
import { openApiOptions, swaggerUiOptions } from './http/openapi.js'
import { registerProblemPages } from './http/problem-pages.js'
import { type Dependencies, registerDependencyMetrics, registerReadiness } from './http/readiness.js'
import { documentCommonProblems } from './http/responses.js'
import { RouteMethods } from './http/route-methods.js'
import {
  CompiledSchemas,
  cachingSerializerFactory,
  cachingValidatorCompiler,
} from './http/schema-compilers.js'
import { apiCacheControl, apiSecurityHeaders, registerSecurityHeaders } from './http/security-headers.js'
import { IdempotencyService } from './idempotency/idempotency-service.js'
import type { IdempotencyStore } from './idempotency/idempotency-store.js'
import { KyselyIdempotencyStore } from './idempotency/kysely-idempotency-store.js'
import { registerIdempotency } from './idempotency/routes/idempotency-hooks.js'
import { LicenseStatementGroups } from './licenses/kysely-license-statement-groups.js'
import { KyselyLicenseStore } from './licenses/kysely-license-store.js'
import { LicenseService } from './licenses/license-service.js'
import { registerCreateLicense } from './licenses/routes/create-license.js'
import { registerGetLicense } from './licenses/routes/get-license.js'
import { registerListLicenses } from './licenses/routes/list-licenses.js'
import { registerReinstateLicense } from './licenses/routes/reinstate-license.js'
import { registerRenewLicense } from './licenses/routes/renew-license.js'
import { registerRevokeLicense } from './licenses/routes/revoke-license.js'
import { registerUpdateLicense } from './licenses/routes/update-license.js'
import { registerValidateLicense } from './licenses/routes/validate-license.js'
import { KyselyPolicyStore } from './policies/kysely-policy-store.js'
import { PolicyService } from './policies/policy-service.js'
import { registerCreatePolicy } from './policies/routes/create-policy.js'
import { registerDeletePolicy } from './policies/routes/delete-policy.js'
import { registerGetPolicy } from './policies/routes/get-policy.js'
import { registerListPolicies } from './policies/routes/list-policies.js'
import { registerUpdatePolicy } from './policies/routes/update-policy.js'
import { KyselyProductStore } from './products/kysely-product-store.js'
import { ProductService } from './products/product-service.js'
import { registerCreateProduct } from './products/routes/create-product.js'
import { registerGetProduct } from './products/routes/get-product.js'
import { registerListProducts } from './products/routes/list-products.js'
import { registerResumeProduct } from './products/routes/resume-product.js'
import { registerSuspendProduct } from './products/routes/suspend-product.js'
import { registerUpdateProduct } from './products/routes/update-product.js'
import { registerApiProtection } from './protection/routes/application-facing.js'
import { Limits, limitOutsideApi, type ProtectionOptions } from './protection/routes/rate-limits.js'
import type { Database } from './storage/database.js'
import { EventGroup } from './storage/event-group.js'
import { KyselyUnitOfWork } from './storage/kysely-unit-of-work.js'
import { isSqlite } from './storage/write-transaction.js'
import { KyselySigningKeyStore } from './tokens/kysely-signing-key-store.js'
import { registerCreateLicenseToken } from './tokens/routes/create-license-token.js'
import { registerCreateLicenseTokenByKey } from './tokens/routes/create-license-token-by-key.js'
import { registerListProductKeys } from './tokens/routes/list-product-keys.js'
import { registerRotateProductKey } from './tokens/routes/rotate-product-key.js'
import { TokenService } from './tokens/token-service.js'
import { KyselyUsageStore } from './usage/kysely-usage-store.js'
import { registerIncrementLicenseUsage } from './usage/routes/increment-license-usage.js'
import { registerIncrementLicenseUsageByKey } from './usage/routes/increment-license-usage-by-key.js'
import { registerResetLicenseUsage } from './usage/routes/reset-license-usage.js'
import { UsageService } from './usage/usage-service.js'
import { serverVersion } from './version.js'
import { registerDeliveryMetrics } from './webhooks/delivery-metrics.js'
import { DeliveryWorker } from './webhooks/delivery-worker.js'
import { HttpWebhookSender, type WebhookSender } from './webhooks/http-webhook-sender.js'
import { KyselyWebhookStore } from './webhooks/kysely-webhook-store.js'
import { registerCreateWebhookEndpoint } from './webhooks/routes/create-webhook-endpoint.js'
import { registerDeleteWebhookEndpoint } from './webhooks/routes/delete-webhook-endpoint.js'
import { registerGetWebhookEndpoint } from './webhooks/routes/get-webhook-endpoint.js'
import { registerListWebhookDeliveries } from './webhooks/routes/list-webhook-deliveries.js'
import { registerListWebhookEndpoints } from './webhooks/routes/list-webhook-endpoints.js'
import { registerRetryWebhookDelivery } from './webhooks/routes/retry-webhook-delivery.js'
import { registerRotateWebhookEndpointSecret } from './webhooks/routes/rotate-webhook-endpoint-secret.js'
import { registerTestWebhookEndpoint } from './webhooks/routes/test-webhook-endpoint.js'
import { registerUpdateWebhookEndpoint } from './webhooks/routes/update-webhook-endpoint.js'
import { WebhookService } from './webhooks/webhook-service.js'

export interface AppDeps {
  readonly db: Kysely<Database>
  readonly clock: Clock
  readonly secretKeys: SecretKeys
  /** Fastify's logger option: pino options, or false for none (tests). */
  readonly logger: FastifyServerOptions['logger']
  /** The built dashboard's folder (served at /dashboard); undefined: /dashboard says it is not built. */
  readonly dashboardRoot?: string | undefined
  /** KEYTURN_RECORD_VALIDATIONS: record every validation outcome as an event. Default false. */
  readonly recordValidations?: boolean
  /** The idempotency store; tests wrap the real one to inject faults (a crash before the response is stored). */
  readonly idempotencyStore?: IdempotencyStore
  /** Compiled route schemas to reuse (tests share one across the apps of a process); default: none yet. */
  readonly compiledSchemas?: CompiledSchemas
  /** Rate limits and the key-guessing guard (protection/); absent: none (tests, `openApiJson`). */
  readonly protection?: ProtectionOptions
  /** Fastify's `trustProxy` (KEYTURN_TRUST_PROXY); default false: X-Forwarded-For is not believed. */
  readonly trustProxy?: boolean | number | string
  /** Origins allowed by CORS (KEYTURN_CORS_ORIGINS); default none: CORS off. */
  readonly corsOrigins?: readonly string[]
  /**
   * Webhook settings (KEYTURN_WEBHOOK_ALLOW_HTTP / _PRIVATE, both false by default;
   * KEYTURN_WEBHOOK_LEASE_SECONDS, 60 by default).
   */
  readonly webhooks?: {
    readonly allowHttp: boolean
    readonly allowPrivate: boolean
    readonly leaseSeconds?: number
  }
  /** KEYTURN_EVENT_RETENTION_DAYS; default 90. */
  readonly eventRetentionDays?: number
  /**
   * The whole-request timeout (default 60 s) and how often Node checks it (default 30 s): tests
   * shorten both.
   */
  readonly httpTimeouts?: { readonly requestMs: number; readonly checkIntervalMs: number }
  /** How webhooks are sent; tests may replace the HTTP sender (a port). */
  readonly webhookSender?: WebhookSender
  /** The database's and Redis's reachability (`/readyz` reasons, `/metrics`); absent in tests. */
  readonly dependencies?: Dependencies
}

export interface Services {
  readonly apiKeys: ApiKeyService
  readonly products: ProductService
  readonly licenses: LicenseService
  readonly tokens: TokenService
  readonly activations: ActivationService
  readonly idempotency: IdempotencyService
  readonly events: EventService
  readonly validationRecording: ValidationRecording
  readonly usage: UsageService
  readonly customers: CustomerService
  readonly entitlements: EntitlementService
  readonly policies: PolicyService
  readonly webhooks: WebhookService
  /** Background work, run by main.ts on every process (tests call `tick`). */
  readonly deliveries: DeliveryWorker
  readonly eventRetention: EventRetention
}

/** Largest request body accepted; the largest legitimate one is a few KiB. */
const bodyLimit = 64 * 1024

/**
 * How long a whole request (headers and body) may take to arrive; then `408 request_timeout`. Node's
 * default for the headers alone is also 60 s; Fastify turns the whole-request limit off, so a client
 * that sent its headers and then stalled its body held the connection for ever.
 */
const requestTimeoutMs = 60_000

/** The composition root: creates stores and services and wires the routes. No I/O. */
export function buildApp(deps: AppDeps): { app: App; services: Services } {
  const services = createServices(deps)
  const compiledSchemas = deps.compiledSchemas ?? new CompiledSchemas()
  const requestTimeout = deps.httpTimeouts?.requestMs ?? requestTimeoutMs
  const app = Fastify({
    logger: deps.logger,
    // registerRequestLog: one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit,
    genReqId: () => newId('request'),
    frameworkErrors: handleFrameworkError,
    clientErrorHandler: handleClientError,
    http: {
      requireHostHeader: false, // refused as a problem by refuseUnreadableRequests below
      // Node's default, stated: never above the whole request's limit (Node would swap the two).
      headersTimeout: Math.min(60_000, requestTimeout),
      ...(deps.httpTimeouts === undefined
        ? {}
        : { connectionsCheckingInterval: deps.httpTimeouts.checkIntervalMs }),
    },
    requestTimeout,
    // An idle keep-alive connection closes after 72 s (Fastify's default, stated): longer than the
    // 60 s idle timeout of common load balancers, so they close first and never reuse a closed one.
    keepAliveTimeout: 72_000,
    // A connection with no traffic either way for 2 minutes (a client that stopped reading its
    // answer) is closed; idle keep-alive connections and slow requests end sooner by the limits above.
    connectionTimeout: 120_000,
    // `/v0/…` is `/api/v0/…` under another name (docs/decisions/0006-authentication-and-roles.md): rewritten before routing, so every
    // route is registered, compiled and documented once, and behaves the same under both.
    rewriteUrl: (request) => {
      const url = request.url ?? '/'
      return url.startsWith('/v0/') ? `/api${url}` : url
    },
    schemaController: { compilersFactory: { buildSerializer: cachingSerializerFactory(compiledSchemas) } },
    // A hop count works at run time (proxy-addr) though Fastify's types leave numbers out.
    trustProxy: (deps.trustProxy ?? false) as boolean | string,
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(cachingValidatorCompiler(compiledSchemas))
  app.removeContentTypeParser('text/plain') // bodies are JSON; anything else answers 415
  registerJsonBodyParser(app)
  readEmptyBodiesAsAbsent(app)
  const routes = new RouteMethods()
  app.addHook('onRoute', (route) => routes.add(route.url, route.method))

  // The hooks of every request are callback-style: an async hook costs a promise and a
  // turn of the microtask queue per request even when it has nothing to wait for.
  const untrustedProxy = untrustedProxyWarning()
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Request-Id', request.id)
    if (request.headers['x-forwarded-for'] !== undefined) {
      untrustedProxy(request)
    }
    done()
  })
  app.addHook('onRequest', refuseUnreadableRequests)
  refuseConnect(app.server, app.log)
  serveAllExpectations(app.server)
  // A POST or PATCH without a body reads as `{}`: actions (revoke, tokens) need none, and a create
  // without one is told which fields are missing rather than that a body is absent.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && (request.method === 'POST' || request.method === 'PATCH')) {
      request.body = {}
    }
    done()
  })
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(notFoundHandler(routes))

  const limits = deps.protection === undefined ? undefined : new Limits(deps.protection)
  if (limits !== undefined) {
    limitOutsideApi(app, limits)
  }
  if (deps.corsOrigins !== undefined && deps.corsOrigins.length > 0) {
    app.register(cors, corsOptions(deps.corsOrigins))
  }
  const protectedApi = { services, limits, clock: deps.clock }

  app.register(swagger, openApiOptions)
  app.register(swaggerUi, swaggerUiOptions)

  closeConnectionsWhenClosing(app)
  registerRequestLog(app)
  registerMetrics(app, (registry) => {
    registerDeliveryMetrics(registry, services.deliveries)
    if (deps.dependencies !== undefined) {
      registerDependencyMetrics(registry, deps.dependencies)
    }
  })
  app.register(async (ops: App) => {
    ops.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true }
    })
    // Probes come every few seconds: log them only when something is wrong.
    ops.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }))
    registerReadiness(ops, deps.db, deps.dependencies)
    ops.get('/openapi.json', async () => app.swagger())
    registerProblemPages(ops)
  })
  registerDashboard(app, deps.dashboardRoot)
  // The root is where a person types the server's address: the dashboard is what they look for.
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect(dashboardPath, 302))

  app.register(async (scope: App) => registerApi(scope, protectedApi), { prefix: '/api/v0' })
  return { app, services }
}

/**
 * Behind a reverse proxy that KEYTURN_TRUST_PROXY does not name, every client is the proxy: one
 * client's wrong keys block them all (the key-guessing guard), and they share one rate budget.
 * Warns once per process, at the first request that carries `X-Forwarded-For` from a peer not
 * trusted (Fastify then takes the peer as the client: `request.ip` is the socket's address).
 */
function untrustedProxyWarning(): (request: FastifyRequest) => void {
  let hasWarned = false
  return (request) => {
    const peer = request.socket.remoteAddress
    if (hasWarned || peer === undefined || request.ip !== peer) {
      return
    }
    hasWarned = true
    request.log.warn(
      { peer },
      `requests arrive with X-Forwarded-For from ${peer}, which KEYTURN_TRUST_PROXY does not trust: every client behind it counts as ${peer} for rate limits and the key-guessing guard. If ${peer} is your reverse proxy, set KEYTURN_TRUST_PROXY=${peer}.`,
    )
  }
}

/**
 * Many HTTP clients send `Content-Type: application/json` on every POST, with or without a body
 * (`curl -X POST -H 'Content-Type: application/json'`). A request without a body is read as one
 * without a content type, whatever it says, so it reaches the `{}` above instead of a 400 or 415.
 */
function readEmptyBodiesAsAbsent(app: App): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const { headers } = request
    const length = headers['content-length']
    if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
      delete headers['content-type']
    }
    done()
  })
}

function createServices(deps: AppDeps): Services {
  const { db, clock } = deps
  /** A unit of work over the stores `stores` builds on its transaction. */
  // Events that go with no change (tokens, validation outcomes) of every service commit together.
  const eventGroup = new EventGroup(db)
  const unitOfWork = <Stores>(stores: (trx: Kysely<Database>) => Stores) =>
    new KyselyUnitOfWork({ db, clock, stores, group: eventGroup })
  const validationRecording = new ValidationRecording(deps.recordValidations ?? false)
  let tokens: TokenService | undefined
  const webhookStore = new KyselyWebhookStore(db)
  const webhookStorage = unitOfWork((trx) => ({ webhooks: new KyselyWebhookStore(trx) }))
  const deliveries = new DeliveryWorker({
    webhooks: webhookStore,
    storage: webhookStorage,
    sender:
      deps.webhookSender ??
      new HttpWebhookSender({ allowPrivate: deps.webhooks?.allowPrivate ?? false, version: serverVersion }),
    clock,
    secretEncryption: deps.secretKeys.webhookSecretEncryption,
    validationRecording,
    ...(deps.webhooks?.leaseSeconds === undefined ? {} : { leaseMs: deps.webhooks.leaseSeconds * 1000 }),
  })
  const products = new ProductService({
    products: new KyselyProductStore(deps.db),
    storage: unitOfWork((trx) => ({ products: new KyselyProductStore(trx) })),
    clock: deps.clock,
    signingKeyEncryption: deps.secretKeys.signingKeyEncryption,
    onChange: (id) => tokens?.forgetAnswerSigner(id), // signResponses applies at once in this process
  })
  // On PostgreSQL, activations that arrive together share statements.
  const activationGroups = new ActivationStatementGroups(db)
  const activationStore = new KyselyActivationStore(deps.db, activationGroups)
  const activationCheck: ActivationCheck = {
    findAlive: (licenseId, fingerprint, now) =>
      activationStore.findByFingerprint(licenseId, fingerprint, now),
    countLapsed: (licenseIds, now) => activationStore.countLapsed(licenseIds, now),
  }
  const customers = new CustomerService({
    customers: new KyselyCustomerStore(deps.db),
    storage: unitOfWork((trx) => ({ customers: new KyselyCustomerStore(trx) })),
    clock: deps.clock,
  })
  const entitlements = new EntitlementService({
    entitlements: new KyselyEntitlementStore(deps.db),
    storage: unitOfWork((trx) => ({ entitlements: new KyselyEntitlementStore(trx) })),
    products,
    clock: deps.clock,
  })
  const policies = new PolicyService({
    policies: new KyselyPolicyStore(deps.db),
    storage: unitOfWork((trx) => ({ policies: new KyselyPolicyStore(trx) })),
    products,
    entitlements,
    clock: deps.clock,
  })
  // On PostgreSQL, creates and reads of licenses that arrive together share statements.
  const licenseGroups = new LicenseStatementGroups(db)
  const licenses = new LicenseService({
    licenses: new KyselyLicenseStore(deps.db, licenseGroups),
    storage: unitOfWork((trx) => ({ licenses: new KyselyLicenseStore(trx, licenseGroups) })),
    recordsValidations: () => validationRecording.isWanted(),
    products,
    activations: activationCheck,
    policies,
    customers,
    entitlements,
    clock: deps.clock,
  })
  tokens = new TokenService({
    licenses,
    products,
    activations: activationCheck,
    signingKeys: new KyselySigningKeyStore(deps.db),
    storage: unitOfWork((trx) => ({ signingKeys: new KyselySigningKeyStore(trx) })),
    clock: deps.clock,
    signingKeyEncryption: deps.secretKeys.signingKeyEncryption,
    // SQLite works inside this process's event loop, which leaves the thread pool a core;
    // PostgreSQL takes that core for itself (tokens/ed25519.ts).
    answerSigning: isSqlite(deps.db) ? 'thread-pool' : 'event-loop',
  })
  return {
    customers,
    entitlements,
    policies,
    products,
    licenses,
    activations: new ActivationService({
      activations: activationStore,
      storage: unitOfWork((trx) => ({ activations: new KyselyActivationStore(trx, activationGroups) })),
      licenses,
      clock: deps.clock,
    }),
    tokens,
    apiKeys: new ApiKeyService({
      apiKeys: new KyselyApiKeyStore(deps.db),
      storage: unitOfWork((trx) => ({ apiKeys: new KyselyApiKeyStore(trx) })),
      products,
      clock: deps.clock,
      digestKey: deps.secretKeys.apiKeyDigest,
    }),
    idempotency: new IdempotencyService({
      store: deps.idempotencyStore ?? new KyselyIdempotencyStore(deps.db),
      events: new KyselyEventStore(deps.db),
      clock: deps.clock,
      responseEncryption: deps.secretKeys.idempotencyResponseEncryption,
    }),
    events: new EventService({ events: new KyselyEventStore(deps.db) }),
    validationRecording,
    usage: new UsageService({
      storage: unitOfWork((trx) => ({ usage: new KyselyUsageStore(trx) })),
      licenses,
      clock: deps.clock,
    }),
    webhooks: new WebhookService({
      webhooks: webhookStore,
      storage: webhookStorage,
      products,
      clock,
      secretEncryption: deps.secretKeys.webhookSecretEncryption,
      allowHttp: deps.webhooks?.allowHttp ?? false,
      onEndpointsChanged: () => deliveries.refreshSubscriptions(),
    }),
    deliveries,
    eventRetention: new EventRetention({
      events: new KyselyEventStore(db),
      clock,
      retentionDays: deps.eventRetentionDays ?? 90,
    }),
  }
}

function corsOptions(origins: readonly string[]) {
  return {
    origin: [...origins],
    methods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Keyturn-Sign'],
    // What a browser application reads: the signature and what it covers, limits, the request id.
    exposedHeaders: [
      'Content-Digest',
      'Date',
      'Signature',
      'Signature-Input',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
      'Request-Id',
      'Idempotent-Replayed',
    ],
    maxAge: 600,
  }
}

/** Every API route, in one list: grep here to find where a path is served. */
function registerApi(
  api: App,
  { services, limits, clock }: { services: Services; limits: Limits | undefined; clock: Clock },
): void {
  registerSecurityHeaders(api, apiSecurityHeaders, apiCacheControl)
  api.addHook(
    'onRequest',
    authenticate(
      services.apiKeys,
      limits === undefined
        ? undefined
        : (request, reply) => new Promise<boolean>((resolve) => limits.takeAddress(request, reply, resolve)),
    ),
  )
  api.addHook('onError', forgetGoneKeys(services.apiKeys))
  registerApiProtection(api, { tokens: services.tokens, clock, limits }) // before the routes: its onRoute hook
  documentCommonProblems(api) // before the routes: 413 and 415 in the document of each with a body
  registerIdempotency(api, services.idempotency) // before the routes: it adds the header to each POST

  registerListLicenses(api, services.licenses)
  registerCreateLicense(api, services.licenses)
  registerValidateLicense(api, services.licenses)
  registerGetLicense(api, services.licenses)
  registerUpdateLicense(api, services.licenses)
  registerRevokeLicense(api, services.licenses)
  registerReinstateLicense(api, services.licenses)
  registerRenewLicense(api, services.licenses)
  registerCreateLicenseToken(api, services.tokens)
  registerCreateLicenseTokenByKey(api, services.tokens)
  registerIncrementLicenseUsageByKey(api, services.usage)
  registerIncrementLicenseUsage(api, services.usage)
  registerResetLicenseUsage(api, services.usage)

  registerActivateLicenseByKey(api, services.activations)
  registerDeactivateLicenseByKey(api, services.activations)
  registerHeartbeatLicenseByKey(api, services.activations)
  registerActivateLicense(api, services.activations)
  registerListActivations(api, services.activations)
  registerListAllActivations(api, services.activations)
  registerGetActivation(api, services.activations)
  registerDeleteActivation(api, services.activations)
  registerHeartbeatActivation(api, services.activations)

  registerListProducts(api, services.products)
  registerCreateProduct(api, services.products)
  registerGetProduct(api, services.products)
  registerUpdateProduct(api, services.products)
  registerSuspendProduct(api, services.products)
  registerResumeProduct(api, services.products)
  registerListProductKeys(api, services.tokens)
  registerRotateProductKey(api, services.tokens)

  registerListWebhookEndpoints(api, services.webhooks)
  registerCreateWebhookEndpoint(api, services.webhooks)
  registerGetWebhookEndpoint(api, services.webhooks)
  registerUpdateWebhookEndpoint(api, services.webhooks)
  registerDeleteWebhookEndpoint(api, services.webhooks)
  registerRotateWebhookEndpointSecret(api, services.webhooks)
  registerTestWebhookEndpoint(api, services.webhooks)
  registerListWebhookDeliveries(api, services.webhooks)
  registerRetryWebhookDelivery(api, services.webhooks)

  registerListEvents(api, services.events)
  registerGetEvent(api, services.events)
  registerListCustomers(api, services.customers)
  registerCreateCustomer(api, services.customers)
  registerGetCustomer(api, services.customers)
  registerUpdateCustomer(api, services.customers)
  registerDeleteCustomer(api, services.customers)

  registerListEntitlements(api, services.entitlements)
  registerCreateEntitlement(api, services.entitlements)
  registerGetEntitlement(api, services.entitlements)
  registerUpdateEntitlement(api, services.entitlements)
  registerDeleteEntitlement(api, services.entitlements)

  registerListPolicies(api, services.policies)
  registerCreatePolicy(api, services.policies)
  registerGetPolicy(api, services.policies)
  registerUpdatePolicy(api, services.policies)
  registerDeletePolicy(api, services.policies)

  registerListApiKeys(api, services.apiKeys)
  registerCreateApiKey(api, services.apiKeys)
  registerGetCurrentApiKey(api, services.apiKeys)
  registerGetApiKey(api, services.apiKeys)
  registerDeleteApiKey(api, services.apiKeys)
}
