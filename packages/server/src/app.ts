import cors from '@fastify/cors'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyRequest, type FastifyServerOptions, LogController } from 'fastify'
import type { Kysely } from 'kysely'
import { ActivationService } from './activations/activation-service.js'
import { ActivationStatementGroups } from './activations/kysely-activation-statement-groups.js'
import { KyselyActivationStore } from './activations/kysely-activation-store.js'
import { registerActivationsRoutes } from './activations/routes/activations-routes.js'
import { ApiKeyService } from './api-keys/api-key-service.js'
import { KyselyApiKeyStore } from './api-keys/kysely-api-key-store.js'
import { registerApiKeysRoutes } from './api-keys/routes/api-keys-routes.js'
import type { MailConfig } from './config.js'
import type { ActivationCheck } from './core/activation-check.js'
import type { ActivityCounts } from './core/activity-counts.js'
import type { BackgroundJob } from './core/background-loop.js'
import type { Clock } from './core/clock.js'
import { newId } from './core/ids.js'
import type { SecretKeys } from './core/secrets.js'
import { CustomerService } from './customers/customer-service.js'
import { KyselyCustomerStore } from './customers/kysely-customer-store.js'
import { registerCustomersRoutes } from './customers/routes/customers-routes.js'
import { EntitlementService } from './entitlements/entitlement-service.js'
import { KyselyEntitlementStore } from './entitlements/kysely-entitlement-store.js'
import { registerEntitlementsRoutes } from './entitlements/routes/entitlements-routes.js'
import { EventRetention, retentionJob } from './events/event-retention.js'
import { EventService } from './events/event-service.js'
import { KyselyEventStore } from './events/kysely-event-store.js'
import { registerEventsRoutes } from './events/routes/events-routes.js'
import { ValidationRecording } from './events/validation-recording.js'
import { ExpiryNoticeService, expiryNoticeJob } from './expiry-notices/expiry-notice-service.js'
import { KyselyExpiryNoticeStore } from './expiry-notices/kysely-expiry-notice-store.js'
import type { App } from './http/app-types.js'
import { authenticate, forgetGoneKeys, stateOperatorRoles } from './http/authenticate.js'
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
import type { ActionStorage } from './integrations/integration-actions.js'
import { IntegrationReceiver } from './integrations/integration-receiver.js'
import { IntegrationRetries, integrationRetryJob } from './integrations/integration-retries.js'
import { IntegrationService } from './integrations/integration-service.js'
import { KyselyIntegrationStore } from './integrations/kysely-integration-store.js'
import { registerIntegrationsRoutes } from './integrations/routes/integrations-routes.js'
import { registerReceiveWebhook } from './integrations/routes/receive-webhook.js'
import { LicenseFileService } from './license-files/license-file-service.js'
import { registerLicenseFilesRoutes } from './license-files/routes/license-files-routes.js'
import { LicenseImportService } from './license-import/license-import-service.js'
import { registerImportLicenses } from './license-import/routes/import-licenses.js'
import { LicenseStatementGroups } from './licenses/kysely-license-statement-groups.js'
import { KyselyLicenseStore } from './licenses/kysely-license-store.js'
import { LicenseService } from './licenses/license-service.js'
import { registerLicensesRoutes } from './licenses/routes/licenses-routes.js'
import { MailDispatch } from './mail/kysely-mail-dispatch.js'
import { KyselyMailOutbox } from './mail/kysely-mail-outbox.js'
import { MailLogService } from './mail/mail-log-service.js'
import { registerMailMetrics } from './mail/mail-metrics.js'
import { MailTemplates } from './mail/mail-templates.js'
import { MailWorker, mailJob } from './mail/mail-worker.js'
import { registerMailRoutes } from './mail/routes/mail-routes.js'
import { SmtpMailSender } from './mail/smtp-mail-sender.js'
import { KyselyOfflineStore } from './offline/kysely-offline-store.js'
import { OfflineActivationService } from './offline/offline-activation-service.js'
import { registerOfflineRoutes } from './offline/routes/offline-routes.js'
import { KyselyFactorStore } from './operators/kysely-factor-store.js'
import { operatorStorage } from './operators/kysely-operator-storage.js'
import { KyselyOperatorStore } from './operators/kysely-operator-store.js'
import { OidcService, type OidcSettings } from './operators/oidc.js'
import { OperatorService } from './operators/operator-service.js'
import { registerOperatorTwoFactorRoutes } from './operators/routes/operator-2fa-routes.js'
import { registerOperatorAuthRoutes } from './operators/routes/operator-auth-routes.js'
import { registerOperatorOidcRoutes } from './operators/routes/operator-oidc-routes.js'
import { registerOperatorsRoutes } from './operators/routes/operators-routes.js'
import { TwoFactorService } from './operators/totp.js'
import { KyselyPolicyStore } from './policies/kysely-policy-store.js'
import { PolicyService } from './policies/policy-service.js'
import { registerPoliciesRoutes } from './policies/routes/policies-routes.js'
import { KyselyPortalStore } from './portal/kysely-portal-store.js'
import { PortalService, portalPurgeJob } from './portal/portal-service.js'
import { registerPortalRoutes } from './portal/routes/portal-routes.js'
import { registerPortalSite } from './portal/routes/portal-site.js'
import { KyselyProductStore } from './products/kysely-product-store.js'
import { ProductService } from './products/product-service.js'
import { registerProductsRoutes } from './products/routes/products-routes.js'
import { RefusalLog } from './protection/refusal-log.js'
import { registerApiProtection } from './protection/routes/application-facing.js'
import {
  Limits,
  limitOutsideApi,
  limitReceiverRequest,
  type ProtectionOptions,
} from './protection/routes/rate-limits.js'
import { KyselySearchStore } from './search/kysely-search-store.js'
import { registerSearchRoutes } from './search/routes/search-routes.js'
import { SearchService } from './search/search-service.js'
import { KyselySeatSweepStore } from './seat-sweep/kysely-seat-sweep-store.js'
import { SeatSweepService } from './seat-sweep/seat-sweep-service.js'
import { seatSweepJob } from './seat-sweep/seat-sweeper.js'
import { KyselySessionStore } from './sessions/kysely-session-store.js'
import { SessionService } from './sessions/session-service.js'
import { DailyCounters } from './stats/daily-counters.js'
import { FailuresService } from './stats/failures-service.js'
import { KyselyFailuresStore } from './stats/kysely-failures-store.js'
import { KyselyStatsStore } from './stats/kysely-stats-store.js'
import { registerStatsRoutes } from './stats/routes/stats-routes.js'
import { StatsService, statsFlushJob } from './stats/stats-service.js'
import type { Database } from './storage/database.js'
import { EventGroup } from './storage/event-group.js'
import { queueMailFromEvents } from './storage/event-writer.js'
import { KyselyUnitOfWork } from './storage/kysely-unit-of-work.js'
import { databaseRunsInProcess } from './storage/write-transaction.js'
import { KyselySigningKeyStore } from './tokens/kysely-signing-key-store.js'
import { registerTokensRoutes } from './tokens/routes/tokens-routes.js'
import { TokenService } from './tokens/token-service.js'
import { KyselyUsageStore } from './usage/kysely-usage-store.js'
import { registerUsageRoutes } from './usage/routes/usage-routes.js'
import { UsageService } from './usage/usage-service.js'
import { serverVersion } from './version.js'
import { registerDeliveryMetrics } from './webhooks/delivery-metrics.js'
import { DeliveryWorker, deliveryJob } from './webhooks/delivery-worker.js'
import { HttpWebhookSender, type WebhookSender } from './webhooks/http-webhook-sender.js'
import { KyselyWebhookStore } from './webhooks/kysely-webhook-store.js'
import { registerWebhooksRoutes } from './webhooks/routes/webhooks-routes.js'
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
  /** Outbound mail (KEYTURN_SMTP_URL, KEYTURN_MAIL_FROM, KEYTURN_MAIL_TEMPLATES); absent: no mail is queued. */
  readonly mail?: MailConfig
  /** Days before a license's expiry with a `license.expiring_soon` notice; default [14, 3]. */
  readonly expiryNoticeDays?: readonly number[]
  /**
   * The customer portal (KEYTURN_PORTAL): off unless `enabled`; `url` is the portal's address in
   * the mails that send customers there (a product's `branding.portalUrl` wins).
   */
  readonly portal?: { readonly enabled: boolean; readonly url: string }
  /**
   * KEYTURN_PUBLIC_URL: where people reach the server, for the links handed to them (invitations);
   * absent: the request's own origin.
   */
  readonly publicUrl?: string
  /** Single sign-on for operators with an OpenID Connect provider (KEYTURN_OIDC_*); off when undefined. */
  readonly oidc?: OidcSettings
  /** How webhooks are sent; tests may replace the HTTP sender (a port). */
  readonly webhookSender?: WebhookSender
  /** The database's and Redis's reachability (`/readyz` reasons, `/metrics`); absent in tests. */
  readonly dependencies?: Dependencies
}

export interface Services {
  readonly apiKeys: ApiKeyService
  readonly products: ProductService
  readonly licenses: LicenseService
  readonly licenseImport: LicenseImportService
  readonly tokens: TokenService
  readonly licenseFiles: LicenseFileService
  readonly activations: ActivationService
  readonly offline: OfflineActivationService
  readonly idempotency: IdempotencyService
  readonly events: EventService
  readonly validationRecording: ValidationRecording
  readonly usage: UsageService
  readonly customers: CustomerService
  readonly entitlements: EntitlementService
  readonly policies: PolicyService
  readonly webhooks: WebhookService
  readonly integrations: IntegrationService
  /** The receivers' transaction: the event recorded and what it asks for done together. */
  readonly integrationActions: ActionStorage
  /** Tries again the provider events that could not be acted on yet. */
  readonly integrationRetries: IntegrationRetries
  /** Background work (`background` below runs their ticks; tests call `tick` themselves). */
  readonly deliveries: DeliveryWorker
  /** Mail sending; undefined while mail is off. */
  readonly mail: MailWorker | undefined
  /** The delivery log (`GET /emails`); answers while mail is off too (with what was queued before). */
  readonly mailLog: KyselyMailOutbox
  readonly emails: MailLogService
  readonly eventRetention: EventRetention
  readonly seatSweep: SeatSweepService
  readonly expiryNotices: ExpiryNoticeService
  /** Customer sessions (the portal's) and, later, operator sessions. */
  readonly sessions: SessionService
  readonly portal: PortalService
  readonly search: SearchService
  /** Operator accounts: the people who sign in to the dashboard. */
  readonly operators: OperatorService
  /** Daily counts (`GET /stats`); `background` flushes them, tests call `flush` themselves. */
  readonly stats: StatsService
  /** Where services count what happened for `stats` (in memory until a flush). */
  readonly counts: ActivityCounts
  /** The clients the rate limits refused, in this process's memory (`GET /stats/failures`). */
  readonly refusals: RefusalLog
  /** The overview's latest failures (`GET /stats/failures`). */
  readonly failures: FailuresService
  /** Operators' second factors (TOTP and recovery codes). */
  readonly twoFactor: TwoFactorService
  /** Single sign-on for operators; undefined unless KEYTURN_OIDC_ISSUER is set. */
  readonly oidc: OidcService | undefined
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
export function buildApp(deps: AppDeps): {
  app: App
  services: Services
  /** The background work every serving process runs (started by the serve entry point). */
  background: readonly BackgroundJob[]
} {
  const services = createServices(deps)
  const background = [
    deliveryJob(services.deliveries),
    retentionJob(services.eventRetention),
    seatSweepJob(services.seatSweep),
    expiryNoticeJob(services.expiryNotices),
    portalPurgeJob(services.portal),
    statsFlushJob(services.stats),
    integrationRetryJob(services.integrationRetries),
    ...(services.mail === undefined ? [] : [mailJob(services.mail)]),
  ]
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

  const limits = deps.protection === undefined ? undefined : new Limits(deps.protection, services.refusals)
  if (limits !== undefined) {
    limitOutsideApi(app, limits)
  }
  if (deps.corsOrigins !== undefined && deps.corsOrigins.length > 0) {
    app.register(cors, corsOptions(deps.corsOrigins))
  }
  const protectedApi = {
    services,
    limits,
    clock: deps.clock,
    portalEnabled: deps.portal?.enabled === true,
    publicUrl: deps.publicUrl,
  }

  app.register(swagger, openApiOptions)
  app.register(swaggerUi, swaggerUiOptions)

  closeConnectionsWhenClosing(app)
  registerRequestLog(app)
  registerMetrics(app, (registry) => {
    registerDeliveryMetrics(registry, services.deliveries)
    registerMailMetrics(registry, services.mailLog, services.mail)
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
  if (deps.portal?.enabled === true) {
    registerPortalSite(app, services.portal)
  }
  registerOperatorAuthRoutes(app, services.operators, deps.publicUrl)
  registerOperatorTwoFactorRoutes(app, services.operators, services.twoFactor)
  if (services.oidc !== undefined) {
    registerOperatorOidcRoutes(app, services.operators, services.oidc)
  }
  // The root is where a person types the server's address: the dashboard is what they look for.
  app.get('/', { schema: { hide: true } }, (_request, reply) => reply.redirect(dashboardPath, 302))

  app.register(async (scope: App) => registerApi(scope, protectedApi), { prefix: '/api/v0' })
  // Fastify runs onClose hooks once the requests in flight have finished: their counts too are
  // stored before the database closes (`keyturn serve` closes it after the app).
  app.addHook('onClose', async () => {
    try {
      await services.stats.flush()
    } catch (error) {
      app.log.error({ err: error }, 'statistics flush failed while stopping')
    }
  })
  // Payment providers authenticate by signature, not API key: a scope of their own, beside the API's.
  const receiver = new IntegrationReceiver({
    integrations: new KyselyIntegrationStore(deps.db),
    clock: deps.clock,
    secretEncryption: deps.secretKeys.integrationSecretEncryption,
    actions: services.integrationActions,
    counts: services.counts,
  })
  const receiverLimit = limits === undefined ? undefined : limitReceiverRequest(limits)
  app.register(async (scope: App) => registerReceiveWebhook(scope, receiver, receiverLimit), {
    prefix: '/api/v0',
  })
  return { app, services, background }
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
  const counts = new DailyCounters(clock)
  const refusals = new RefusalLog(clock)
  let tokens: TokenService | undefined
  const mailOutbox = new KyselyMailOutbox(db, deps.secretKeys.mailPayloadEncryption)
  if (deps.mail !== undefined) {
    queueMailFromEvents()
  }
  const mailTemplates = deps.mail === undefined ? undefined : new MailTemplates(deps.mail.templatesFolder)
  const mailDispatch =
    mailTemplates === undefined
      ? undefined
      : new MailDispatch({ outbox: mailOutbox, templates: mailTemplates })
  const mail =
    deps.mail === undefined
      ? undefined
      : new MailWorker({
          outbox: mailOutbox,
          sender: new SmtpMailSender({ url: deps.mail.smtpUrl, from: deps.mail.from }),
          clock,
        })
  const webhookStore = new KyselyWebhookStore(
    db,
    mailDispatch === undefined ? undefined : (trx, events, now) => mailDispatch.queue(trx, events, now),
  )
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
  const integrationActions = unitOfWork((trx) => ({
    integrations: new KyselyIntegrationStore(trx),
    customers: new KyselyCustomerStore(trx),
    licenses: new KyselyLicenseStore(trx, licenseGroups),
    policies: new KyselyPolicyStore(trx),
  }))
  const licenseStore = new KyselyLicenseStore(deps.db, licenseGroups)
  const licenses = new LicenseService({
    licenses: licenseStore,
    storage: unitOfWork((trx) => ({ licenses: new KyselyLicenseStore(trx, licenseGroups) })),
    recordsValidations: () => validationRecording.isWanted(),
    counts,
    products,
    activations: activationCheck,
    policies,
    customers,
    entitlements,
    clock: deps.clock,
  })
  const licenseImport = new LicenseImportService({
    stores: {
      licenses: licenseStore,
      customers: new KyselyCustomerStore(db),
      activations: activationStore,
    },
    storage: unitOfWork((trx) => ({
      licenses: new KyselyLicenseStore(trx, licenseGroups),
      customers: new KyselyCustomerStore(trx),
      activations: new KyselyActivationStore(trx, activationGroups),
    })),
    products,
    policies,
    entitlements,
    clock,
  })
  tokens = new TokenService({
    licenses,
    products,
    activations: activationCheck,
    signingKeys: new KyselySigningKeyStore(deps.db),
    storage: unitOfWork((trx) => ({ signingKeys: new KyselySigningKeyStore(trx) })),
    clock: deps.clock,
    signingKeyEncryption: deps.secretKeys.signingKeyEncryption,
    policies,
    // SQLite works inside this process's event loop, which leaves the thread pool a core;
    // PostgreSQL takes that core for itself (tokens/ed25519.ts).
    answerSigning: databaseRunsInProcess(deps.db) ? 'thread-pool' : 'event-loop',
  })
  const licenseFiles = new LicenseFileService({
    licenses,
    activations: activationStore,
    policies,
    products,
    signers: tokens,
    storage: unitOfWork(() => ({})),
    clock: deps.clock,
  })
  const sessions = new SessionService({ store: new KyselySessionStore(db), clock })
  const activations = new ActivationService({
    activations: activationStore,
    storage: unitOfWork((trx) => ({ activations: new KyselyActivationStore(trx, activationGroups) })),
    licenses,
    counts,
    clock: deps.clock,
  })
  const offline = new OfflineActivationService({
    offline: new KyselyOfflineStore(db),
    storage: unitOfWork((trx) => ({ offline: new KyselyOfflineStore(trx) })),
    activations,
    licenses,
    files: licenseFiles,
    secretKey: deps.secretKeys.offlineDeactivation,
    clock,
  })
  const portal = new PortalService({
    portal: new KyselyPortalStore(db, mailOutbox),
    storage: unitOfWork((trx) => ({
      portal: new KyselyPortalStore(trx, mailOutbox),
      activations: new KyselyActivationStore(trx, activationGroups),
    })),
    licenses: {
      find: (which) => licenseStore.find(which),
      viewOf: (license, now) => licenses.viewOf(license, now),
    },
    sessions,
    templates: mailTemplates,
    clock,
    digestKey: deps.secretKeys.portalCodeDigest,
    licenseFiles: {
      issueForCustomerMachine: (by, view, machine) => licenseFiles.issueForCustomerMachine(by, view, machine),
    },
    offline,
    portalUrl: deps.portal?.url,
    counts,
  })
  const operatorStore = new KyselyOperatorStore(db)
  const factorStore = new KyselyFactorStore(db)
  const operatorChanges = operatorStorage({ db, clock, outbox: mailOutbox, group: eventGroup })
  const twoFactor = new TwoFactorService({
    store: factorStore,
    events: operatorChanges,
    operators: operatorStore,
    sessions,
    clock,
    encryptionKey: deps.secretKeys.operatorTotpEncryption,
    recoveryDigestKey: deps.secretKeys.operatorRecoveryCodeDigest,
  })
  const operators = new OperatorService({
    store: operatorStore,
    storage: operatorChanges,
    sessions,
    clock,
    secondFactor: twoFactor,
    ...(mailTemplates === undefined ? {} : { templates: mailTemplates }),
  })
  return {
    sessions,
    portal,
    search: new SearchService({ store: new KyselySearchStore(db) }),
    operators,
    stats: new StatsService({ store: new KyselyStatsStore(db), counters: counts, products, clock }),
    counts,
    refusals,
    failures: new FailuresService({ store: new KyselyFailuresStore(db), refusals, products }),
    twoFactor,
    oidc:
      deps.oidc === undefined
        ? undefined
        : new OidcService({
            settings: deps.oidc,
            factors: factorStore,
            operators: operatorStore,
            sessions,
            clock,
            stateKey: deps.secretKeys.operatorOidcStateEncryption,
            events: operatorChanges,
          }),
    customers,
    entitlements,
    policies,
    products,
    licenses,
    licenseImport,
    activations,
    tokens,
    licenseFiles,
    offline,
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
    integrationActions,
    integrationRetries: new IntegrationRetries({
      integrations: new KyselyIntegrationStore(deps.db),
      actions: integrationActions,
      clock,
      counts,
    }),
    integrations: new IntegrationService({
      integrations: new KyselyIntegrationStore(deps.db),
      storage: unitOfWork((trx) => ({ integrations: new KyselyIntegrationStore(trx) })),
      policies,
      clock,
      secretEncryption: deps.secretKeys.integrationSecretEncryption,
    }),
    deliveries,
    mail,
    mailLog: mailOutbox,
    emails: new MailLogService(mailOutbox),
    eventRetention: new EventRetention({
      events: new KyselyEventStore(db),
      clock,
      retentionDays: deps.eventRetentionDays ?? 90,
    }),
    seatSweep: new SeatSweepService({
      store: new KyselySeatSweepStore(db),
      storage: unitOfWork((trx) => ({ sweep: new KyselySeatSweepStore(trx) })),
      clock,
    }),
    expiryNotices: new ExpiryNoticeService({
      store: new KyselyExpiryNoticeStore(db),
      clock,
      noticeDays: deps.expiryNoticeDays ?? [14, 3],
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
    // Browsers of other origins call with API keys only: the operator session cookie never goes
    // with a cross-origin request the server would answer.
    credentials: false,
  }
}

/** The API: its hooks, then each feature's routes (`<feature>/routes/<feature>-routes.ts` lists them). */
function registerApi(
  api: App,
  {
    services,
    limits,
    clock,
    portalEnabled,
    publicUrl,
  }: {
    services: Services
    limits: Limits | undefined
    clock: Clock
    portalEnabled: boolean
    publicUrl: string | undefined
  },
): void {
  registerSecurityHeaders(api, apiSecurityHeaders, apiCacheControl)
  api.addHook(
    'onRequest',
    authenticate(
      services.apiKeys,
      services.operators,
      limits === undefined
        ? undefined
        : (request, reply) => new Promise<boolean>((resolve) => limits.takeAddress(request, reply, resolve)),
    ),
  )
  api.addHook('onError', forgetGoneKeys(services.apiKeys))
  stateOperatorRoles(api) // before the routes: its onRoute hook
  registerApiProtection(api, { tokens: services.tokens, clock, limits }) // before the routes: its onRoute hook
  documentCommonProblems(api) // before the routes: 413 and 415 in the document of each with a body
  registerIdempotency(api, services.idempotency) // before the routes: it adds the header to each POST

  registerLicensesRoutes(api, services.licenses)
  registerImportLicenses(api, services.licenseImport)
  registerTokensRoutes(api, services.tokens)
  registerLicenseFilesRoutes(api, services.licenseFiles)
  registerUsageRoutes(api, services.usage)
  registerActivationsRoutes(api, services.activations)
  registerOfflineRoutes(api, services.offline)
  registerProductsRoutes(api, services.products)
  registerWebhooksRoutes(api, services.webhooks)
  registerIntegrationsRoutes(api, services.integrations)
  registerEventsRoutes(api, services.events)
  registerMailRoutes(api, services.emails)
  registerCustomersRoutes(api, services.customers)
  registerSearchRoutes(api, services.search)
  registerStatsRoutes(api, services.stats, services.failures)
  registerPortalRoutes(api, services.portal, portalEnabled)
  registerEntitlementsRoutes(api, services.entitlements)
  registerPoliciesRoutes(api, services.policies)
  registerApiKeysRoutes(api, services.apiKeys)
  registerOperatorsRoutes(api, services.operators, publicUrl)
}
