import { randomBytes } from 'node:crypto'
import type {
  ActivationId,
  ApiKeyId,
  CustomerId,
  EntitlementId,
  LicenseId,
  PolicyId,
  ProductId,
} from '@keyturn/protocol'
import type { HTTPMethods } from 'fastify'
import type { App } from '../http/app-types.js'
import {
  deactivationCodeMac,
  deactivationSecret,
  formatDeactivationCode,
  writeActivationRequest,
} from '../offline/offline-formats.js'
import type { RequiredOperatorRole } from '../operators/operator-permissions.js'
import { testSecretKeys } from './build-test-app.js'

/**
 * App options under which every catalogue route can succeed for an admin key: the customer portal
 * on, and mail configured (to a closed port: the catalogue's tests never run the sending job), so
 * `POST /customers/:id/portal-link` can queue its mail.
 */
export const catalogueAppOptions = {
  mail: { smtpUrl: 'smtp://127.0.0.1:9?tls=off', from: 'keyturn@localhost', templatesFolder: undefined },
  portal: { enabled: true, url: 'http://127.0.0.1:3000/portal' },
} as const

/** Both prefixes every API route is served under (docs/decisions/0006-authentication-and-roles.md). */
export const apiPrefixes = ['/api/v0', '/v0'] as const

/** Existing resources a catalogue request points at, so only the credentials can make it fail. */
export interface RouteFixture {
  readonly productId: ProductId
  readonly licenseId: LicenseId
  readonly licenseKey: string
  /** A product key's id (not the caller's own key). */
  readonly apiKeyId: ApiKeyId
  /** An activation of the license (fingerprint `fixture-machine`). */
  readonly activationId: ActivationId
  /** Another activation of the license (fingerprint `fixture-offline-machine`), for offline deactivation. */
  readonly offlineActivationId: ActivationId
  /** When it was made: a deactivation code is dated at or after it. */
  readonly offlineActivationCreatedAt: string
  /** The event of the license's creation. */
  readonly eventId: string
  /** The customer owning the license. */
  readonly customerId: CustomerId
  /** The policy the license was made from (a year, one entitlement). */
  readonly policyId: PolicyId
  /** The policy's entitlement (code `fixture-feature`). */
  readonly entitlementId: EntitlementId
  /** A customer without licenses and a policy no license was made from: what the deletes remove. */
  readonly spareCustomerId: CustomerId
  readonly sparePolicyId: PolicyId
  /** A webhook endpoint of the product (its URL is refused at delivery: nothing leaves the machine). */
  readonly webhookEndpointId: string
  /** A delivery of that endpoint (`dlv_none` when the fixture was seeded without a delivery worker). */
  readonly webhookDeliveryId: string
  /** A Stripe integration mapping a price to the policy (admin keys only). */
  readonly integrationId: string
}

let unique = 0
/** A value no other catalogue request used: creates must not collide with one another. */
const nextUnique = () => `${Date.now().toString(36)}${(unique++).toString(36)}`

export interface ApiRoute {
  readonly method: Extract<HTTPMethods, 'GET' | 'POST' | 'PATCH' | 'DELETE'>
  /** As registered, relative to the API prefix. */
  readonly path: string
  /** A concrete, valid request path (with query) for the fixture, relative to the API prefix. */
  readonly url: (fixture: RouteFixture) => string
  /** A valid body for the fixture, when the route takes one. */
  readonly payload?: (fixture: RouteFixture) => Record<string, unknown>
  /**
   * The route confirms the caller's API key inside its own SQL instead of a separate key read
   * (`config.confirmsApiKey`, docs/decisions/0016-api-key-confirmation.md). `authenticate.test.ts`
   * checks this flag against the registered routes' config.
   */
  readonly confirmsApiKey?: true
  /**
   * The least operator role that may call the route, `none` when no operator may (the by-key
   * application routes). The authorization matrix test (operators/routes/operator-roles.test.ts)
   * calls every route as each role and expects exactly this.
   */
  readonly operatorRole: RequiredOperatorRole
}

/**
 * Every authenticated API route. `authenticate.test.ts` checks this list against the routes the app
 * registers, so a new route fails the suite until it is added here (and so gets the shared cases).
 */
export const apiRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    path: '/licenses',
    operatorRole: 'viewer',
    url: (f) => `/licenses?productId=${f.productId}`,
  },
  {
    method: 'POST',
    path: '/licenses',
    operatorRole: 'admin',
    confirmsApiKey: true,
    url: () => '/licenses',
    payload: (f) => ({ productId: f.productId }),
  },
  {
    method: 'POST',
    path: '/licenses/import',
    operatorRole: 'admin',
    url: () => '/licenses/import',
    payload: (f) => ({ licenses: [{ productId: f.productId, externalId: `catalogue-${nextUnique()}` }] }),
  },
  {
    method: 'POST',
    path: '/licenses/validate',
    operatorRole: 'viewer',
    confirmsApiKey: true,
    url: () => '/licenses/validate',
    payload: (f) => ({ key: f.licenseKey, productId: f.productId }),
  },
  {
    method: 'GET',
    path: '/licenses/:id',
    operatorRole: 'viewer',
    confirmsApiKey: true,
    url: (f) => `/licenses/${f.licenseId}`,
  },
  {
    method: 'PATCH',
    path: '/licenses/:id',
    operatorRole: 'admin',
    url: (f) => `/licenses/${f.licenseId}`,
    payload: () => ({ maxActivations: 5 }),
  },
  {
    method: 'POST',
    path: '/licenses/:id/tokens',
    operatorRole: 'admin',
    confirmsApiKey: true,
    url: (f) => `/licenses/${f.licenseId}/tokens`,
    payload: () => ({ customPayload: { plan: 'pro' } }),
  },
  {
    method: 'POST',
    path: '/licenses/tokens',
    operatorRole: 'none',
    confirmsApiKey: true,
    url: () => '/licenses/tokens',
    payload: (f) => ({ key: f.licenseKey, productId: f.productId }),
  },
  {
    method: 'POST',
    path: '/licenses/:id/license-file',
    operatorRole: 'admin',
    confirmsApiKey: true,
    url: (f) => `/licenses/${f.licenseId}/license-file`,
    payload: () => ({ ttl: 86_400 }),
  },
  {
    method: 'POST',
    path: '/activations/:id/license-file',
    operatorRole: 'admin',
    confirmsApiKey: true,
    url: (f) => `/activations/${f.activationId}/license-file`,
    payload: () => ({ encrypt: true }),
  },
  {
    method: 'POST',
    path: '/licenses/license-file',
    operatorRole: 'none',
    confirmsApiKey: true,
    url: () => '/licenses/license-file',
    payload: (f) => ({ key: f.licenseKey, productId: f.productId }),
  },
  {
    method: 'POST',
    path: '/licenses/:id/revoke',
    operatorRole: 'support',
    url: (f) => `/licenses/${f.licenseId}/revoke`,
  },
  {
    method: 'POST',
    path: '/licenses/:id/reinstate',
    operatorRole: 'support',
    url: (f) => `/licenses/${f.licenseId}/reinstate`,
  },
  {
    method: 'POST',
    path: '/licenses/:id/renew',
    operatorRole: 'admin',
    url: (f) => `/licenses/${f.licenseId}/renew`,
    payload: () => ({ duration: 86_400 }),
  },
  {
    method: 'POST',
    path: '/licenses/activate',
    operatorRole: 'none',
    confirmsApiKey: true,
    url: () => '/licenses/activate',
    payload: (f) => ({ key: f.licenseKey, productId: f.productId, fingerprint: 'catalogue-machine' }),
  },
  {
    method: 'POST',
    path: '/licenses/deactivate',
    operatorRole: 'none',
    url: () => '/licenses/deactivate',
    // The machine the route above activated: the fixture's own activation is for the routes below.
    payload: (f) => ({ key: f.licenseKey, productId: f.productId, fingerprint: 'catalogue-machine' }),
  },
  {
    method: 'POST',
    path: '/licenses/heartbeat',
    operatorRole: 'none',
    confirmsApiKey: true,
    url: () => '/licenses/heartbeat',
    payload: (f) => ({ key: f.licenseKey, productId: f.productId, fingerprint: 'fixture-machine' }),
  },
  {
    method: 'POST',
    path: '/licenses/usage',
    operatorRole: 'none',
    confirmsApiKey: true,
    url: () => '/licenses/usage',
    payload: (f) => ({ key: f.licenseKey, productId: f.productId, increment: 1 }),
  },
  {
    method: 'POST',
    path: '/licenses/:id/usage',
    operatorRole: 'admin',
    confirmsApiKey: true,
    url: (f) => `/licenses/${f.licenseId}/usage`,
    payload: () => ({ increment: 2 }),
  },
  {
    method: 'POST',
    path: '/licenses/:id/usage/reset',
    operatorRole: 'admin',
    url: (f) => `/licenses/${f.licenseId}/usage/reset`,
  },
  {
    method: 'POST',
    path: '/licenses/:id/activations',
    operatorRole: 'admin',
    confirmsApiKey: true,
    url: (f) => `/licenses/${f.licenseId}/activations`,
    payload: () => ({ fingerprint: 'another-machine' }),
  },
  {
    method: 'GET',
    path: '/licenses/:id/activations',
    operatorRole: 'viewer',
    url: (f) => `/licenses/${f.licenseId}/activations`,
  },
  {
    method: 'GET',
    path: '/activations',
    operatorRole: 'viewer',
    url: (f) =>
      `/activations?productId=${f.productId}&licenseId=${f.licenseId}&filter=fingerprint:eq:fixture-machine`,
  },
  {
    method: 'GET',
    path: '/activations/:id',
    operatorRole: 'viewer',
    url: (f) => `/activations/${f.activationId}`,
  },
  {
    method: 'POST',
    path: '/activations/:id/heartbeat',
    operatorRole: 'admin',
    url: (f) => `/activations/${f.activationId}/heartbeat`,
  },
  {
    method: 'DELETE',
    path: '/activations/:id',
    operatorRole: 'support',
    url: (f) => `/activations/${f.activationId}`,
  },
  {
    method: 'POST',
    path: '/licenses/activate-offline',
    operatorRole: 'admin',
    url: () => '/licenses/activate-offline',
    payload: (f) => ({
      request: writeActivationRequest(f.licenseKey, {
        productId: f.productId,
        fingerprint: `offline-${nextUnique()}`,
        nonce: randomBytes(16).toString('base64url'),
        created: f.offlineActivationCreatedAt,
      }),
    }),
  },
  {
    method: 'POST',
    path: '/activations/:id/deactivate-offline',
    operatorRole: 'support',
    url: (f) => `/activations/${f.offlineActivationId}/deactivate-offline`,
    payload: (f) => {
      const minute = Math.floor(Date.parse(f.offlineActivationCreatedAt) / 60_000)
      const secret = deactivationSecret(testSecretKeys.offlineDeactivation, f.offlineActivationId)
      return {
        code: formatDeactivationCode(minute, deactivationCodeMac(secret, f.offlineActivationId, minute)),
      }
    },
  },

  { method: 'GET', path: '/products', operatorRole: 'viewer', url: () => '/products' },
  {
    method: 'POST',
    path: '/products',
    operatorRole: 'admin',
    url: () => '/products',
    payload: () => ({ name: 'Another' }),
  },
  { method: 'GET', path: '/products/:id', operatorRole: 'viewer', url: (f) => `/products/${f.productId}` },
  {
    method: 'PATCH',
    path: '/products/:id',
    operatorRole: 'admin',
    url: (f) => `/products/${f.productId}`,
    payload: () => ({ name: 'Renamed' }),
  },
  {
    method: 'POST',
    path: '/products/:id/suspend',
    operatorRole: 'admin',
    url: (f) => `/products/${f.productId}/suspend`,
  },
  {
    method: 'POST',
    path: '/products/:id/resume',
    operatorRole: 'admin',
    url: (f) => `/products/${f.productId}/resume`,
  },
  {
    method: 'GET',
    path: '/products/:id/keys',
    operatorRole: 'viewer',
    url: (f) => `/products/${f.productId}/keys`,
  },
  {
    method: 'POST',
    path: '/products/:id/keys/rotate',
    operatorRole: 'admin',
    url: (f) => `/products/${f.productId}/keys/rotate`,
  },

  { method: 'GET', path: '/customers', operatorRole: 'viewer', url: () => '/customers' },
  {
    method: 'GET',
    path: '/search',
    operatorRole: 'viewer',
    url: (f) => `/search?q=${encodeURIComponent(f.licenseKey)}`,
  },
  { method: 'GET', path: '/stats', operatorRole: 'viewer', url: (f) => `/stats?productId=${f.productId}` },
  {
    method: 'GET',
    path: '/stats/failures',
    operatorRole: 'viewer',
    url: (f) => `/stats/failures?productId=${f.productId}`,
  },
  {
    method: 'POST',
    path: '/customers',
    operatorRole: 'admin',
    url: () => '/customers',
    payload: () => ({ email: `buyer-${nextUnique()}@example.com` }),
  },
  { method: 'GET', path: '/customers/:id', operatorRole: 'viewer', url: (f) => `/customers/${f.customerId}` },
  {
    method: 'PATCH',
    path: '/customers/:id',
    operatorRole: 'admin',
    url: (f) => `/customers/${f.customerId}`,
    payload: () => ({ name: 'Renamed', metadata: { crm: 'x1' } }),
  },
  {
    method: 'DELETE',
    path: '/customers/:id',
    operatorRole: 'admin',
    url: (f) => `/customers/${f.spareCustomerId}`,
  },
  {
    method: 'POST',
    path: '/customers/:id/portal-link',
    operatorRole: 'support',
    url: (f) => `/customers/${f.customerId}/portal-link`,
  },
  {
    method: 'GET',
    path: '/customers/:id/portal-sessions',
    operatorRole: 'viewer',
    url: (f) => `/customers/${f.customerId}/portal-sessions`,
  },
  {
    method: 'DELETE',
    path: '/customers/:id/portal-sessions/:sessionId',
    operatorRole: 'support',
    url: (f) => `/customers/${f.customerId}/portal-sessions/0b9f7c2e-5a41-4f7e-9a0c-3d2b1e6f8a90`,
  },

  { method: 'GET', path: '/policies', operatorRole: 'viewer', url: () => '/policies' },
  {
    method: 'POST',
    path: '/policies',
    operatorRole: 'admin',
    url: () => '/policies',
    payload: (f) => ({ productId: f.productId, name: 'Another plan' }),
  },
  { method: 'GET', path: '/policies/:id', operatorRole: 'viewer', url: (f) => `/policies/${f.policyId}` },
  {
    method: 'PATCH',
    path: '/policies/:id',
    operatorRole: 'admin',
    url: (f) => `/policies/${f.policyId}`,
    payload: () => ({ name: 'Renamed plan' }),
  },
  {
    method: 'DELETE',
    path: '/policies/:id',
    operatorRole: 'admin',
    url: (f) => `/policies/${f.sparePolicyId}`,
  },

  { method: 'GET', path: '/entitlements', operatorRole: 'viewer', url: () => '/entitlements' },
  {
    method: 'POST',
    path: '/entitlements',
    operatorRole: 'admin',
    url: () => '/entitlements',
    payload: (f) => ({ productId: f.productId, code: `feature-${nextUnique()}`, name: 'A feature' }),
  },
  {
    method: 'GET',
    path: '/entitlements/:id',
    operatorRole: 'viewer',
    url: (f) => `/entitlements/${f.entitlementId}`,
  },
  {
    method: 'PATCH',
    path: '/entitlements/:id',
    operatorRole: 'admin',
    url: (f) => `/entitlements/${f.entitlementId}`,
    payload: () => ({ name: 'Renamed feature' }),
  },
  {
    method: 'DELETE',
    path: '/entitlements/:id',
    operatorRole: 'admin',
    url: (f) => `/entitlements/${f.entitlementId}`,
  },

  { method: 'GET', path: '/api-keys', operatorRole: 'viewer', url: () => '/api-keys' },
  {
    method: 'POST',
    path: '/api-keys',
    operatorRole: 'admin',
    url: () => '/api-keys',
    payload: () => ({ name: 'Another admin', role: 'admin' }),
  },
  { method: 'GET', path: '/api-keys/current', operatorRole: 'none', url: () => '/api-keys/current' },
  { method: 'GET', path: '/api-keys/:id', operatorRole: 'viewer', url: (f) => `/api-keys/${f.apiKeyId}` },
  { method: 'DELETE', path: '/api-keys/:id', operatorRole: 'admin', url: (f) => `/api-keys/${f.apiKeyId}` },

  { method: 'GET', path: '/events', operatorRole: 'viewer', url: () => '/events' },
  { method: 'GET', path: '/events/:id', operatorRole: 'viewer', url: (f) => `/events/${f.eventId}` },

  { method: 'GET', path: '/emails', operatorRole: 'viewer', url: () => '/emails' },

  { method: 'GET', path: '/webhook-endpoints', operatorRole: 'viewer', url: () => '/webhook-endpoints' },
  {
    method: 'POST',
    path: '/webhook-endpoints',
    operatorRole: 'admin',
    url: () => '/webhook-endpoints',
    payload: (f) => ({ url: 'https://127.0.0.1:9/catalogue', eventTypes: ['*'], productId: f.productId }),
  },
  {
    method: 'GET',
    path: '/webhook-endpoints/:id',
    operatorRole: 'viewer',
    url: (f) => `/webhook-endpoints/${f.webhookEndpointId}`,
  },
  {
    method: 'PATCH',
    path: '/webhook-endpoints/:id',
    operatorRole: 'admin',
    url: (f) => `/webhook-endpoints/${f.webhookEndpointId}`,
    payload: () => ({ description: 'changed' }),
  },
  {
    method: 'POST',
    path: '/webhook-endpoints/:id/rotate-secret',
    operatorRole: 'admin',
    url: (f) => `/webhook-endpoints/${f.webhookEndpointId}/rotate-secret`,
  },
  {
    method: 'POST',
    path: '/webhook-endpoints/:id/test',
    operatorRole: 'admin',
    url: (f) => `/webhook-endpoints/${f.webhookEndpointId}/test`,
  },
  {
    method: 'GET',
    path: '/webhook-endpoints/:id/deliveries',
    operatorRole: 'viewer',
    url: (f) => `/webhook-endpoints/${f.webhookEndpointId}/deliveries`,
  },
  {
    method: 'POST',
    path: '/webhook-deliveries/:id/retry',
    operatorRole: 'admin',
    url: (f) => `/webhook-deliveries/${f.webhookDeliveryId}/retry`,
  },
  { method: 'GET', path: '/integrations', operatorRole: 'viewer', url: () => '/integrations' },
  {
    method: 'POST',
    path: '/integrations',
    operatorRole: 'admin',
    url: () => '/integrations',
    payload: () => ({ provider: 'lemonsqueezy', signingSecret: 'catalogue-secret' }),
  },
  {
    method: 'GET',
    path: '/integrations/:id',
    operatorRole: 'viewer',
    url: (f) => `/integrations/${f.integrationId}`,
  },
  {
    method: 'PATCH',
    path: '/integrations/:id',
    operatorRole: 'admin',
    url: (f) => `/integrations/${f.integrationId}`,
    payload: () => ({ paymentGraceDays: 3 }),
  },
  {
    method: 'GET',
    path: '/integrations/:id/events',
    operatorRole: 'viewer',
    url: (f) => `/integrations/${f.integrationId}/events`,
  },
  {
    method: 'GET',
    path: '/licenses/:id/provider-links',
    operatorRole: 'viewer',
    url: (f) => `/licenses/${f.licenseId}/provider-links`,
  },
  {
    method: 'DELETE',
    path: '/integrations/:id',
    operatorRole: 'admin',
    url: (f) => `/integrations/${f.integrationId}`,
  },
  // Last: the routes above use the endpoint.
  {
    method: 'DELETE',
    path: '/webhook-endpoints/:id',
    operatorRole: 'admin',
    url: (f) => `/webhook-endpoints/${f.webhookEndpointId}`,
  },
]

/** A route only signed-in operators call (operator accounts): API keys get 403 there. */
export interface OperatorRoute {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  /** As registered, relative to the API prefix. */
  readonly path: string
  readonly operatorRole: RequiredOperatorRole
  /** A concrete path for an existing operator (the one the request may change) and its session. */
  readonly url: (target: { readonly id: string; readonly sessionId: string }) => string
  readonly payload?: () => Record<string, unknown>
}

let invited = 0

/** Every route of operator accounts; `authenticate.test.ts` checks it with `apiRoutes` against the app. */
export const operatorRoutes: readonly OperatorRoute[] = [
  { method: 'GET', path: '/operators', operatorRole: 'viewer', url: () => '/operators' },
  {
    method: 'POST',
    path: '/operators',
    operatorRole: 'owner',
    url: () => '/operators',
    payload: () => ({ email: `invited-${invited++}@example.com`, name: 'Invited', role: 'viewer' }),
  },
  { method: 'GET', path: '/operators/:id', operatorRole: 'viewer', url: ({ id }) => `/operators/${id}` },
  {
    method: 'GET',
    path: '/operators/:id/sessions',
    operatorRole: 'owner',
    url: ({ id }) => `/operators/${id}/sessions`,
  },
  {
    method: 'DELETE',
    path: '/operators/:id/sessions/:sessionId',
    operatorRole: 'owner',
    url: ({ id, sessionId }) => `/operators/${id}/sessions/${sessionId}`,
  },
  {
    method: 'POST',
    path: '/operators/:id/password-reset',
    operatorRole: 'owner',
    url: ({ id }) => `/operators/${id}/password-reset`,
  },
  // After the session routes: a new role ends the operator's sessions.
  {
    method: 'PATCH',
    path: '/operators/:id',
    operatorRole: 'owner',
    url: ({ id }) => `/operators/${id}`,
    payload: () => ({ role: 'support' }),
  },
  {
    method: 'DELETE',
    path: '/operators/:id/sessions',
    operatorRole: 'owner',
    url: ({ id }) => `/operators/${id}/sessions`,
  },
]

/** A request for `route` under `prefix`, ready for `app.inject` once headers are added. */
export function requestFor(route: ApiRoute, prefix: string, fixture: RouteFixture) {
  return {
    method: route.method,
    url: `${prefix}${route.url(fixture)}`,
    ...(route.payload === undefined ? {} : { payload: route.payload(fixture) }),
  }
}

/** What seeding needs of an app: its `inject`, or the same over HTTP for a server process. */
export interface Injector {
  inject(request: {
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
    url: string
    headers?: Record<string, string>
    payload?: Record<string, unknown>
    // biome-ignore lint/suspicious/noExplicitAny: as Fastify's inject; the seeding reads fields it created
  }): Promise<{ statusCode: number; body: string; json(): any }>
}

/** An `Injector` that sends each request over HTTP to `base` (a running `keyturn serve`). */
export function injectOverHttp(base: string): Injector {
  return {
    async inject({ method, url, headers = {}, payload }) {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      })
      const body = await res.text()
      return { statusCode: res.status, body, json: () => JSON.parse(body) }
    },
  }
}

/**
 * Creates, with an admin key, what the catalogue's requests point at: a license (of a customer, made
 * from a policy with an entitlement) and a product key.
 */
export async function seedRouteFixture(
  app: App | Injector,
  admin: { authorization: string },
  productId: ProductId,
  /** The app's delivery worker, to give the fixture a webhook delivery. */
  deliveries?: { tick(): Promise<unknown> },
): Promise<RouteFixture> {
  const created = async (url: string, payload: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: `/api/v0${url}`, headers: admin, payload })
    if (res.statusCode !== 201) {
      throw new Error(`POST ${url} failed: ${res.body}`)
    }
    return res.json()
  }
  const entitlement = await created('/entitlements', { productId, code: 'fixture-feature', name: 'Feature' })
  const policy = await created('/policies', {
    productId,
    name: 'Fixture plan',
    duration: 365 * 86_400,
    entitlements: ['fixture-feature'],
  })
  const customer = await created('/customers', { email: `owner-${nextUnique()}@example.com` })
  const spareCustomer = await created('/customers', { email: `spare-${nextUnique()}@example.com` })
  const sparePolicy = await created('/policies', { productId, name: 'Spare plan' })
  const license = await app.inject({
    method: 'POST',
    url: '/api/v0/licenses',
    headers: admin,
    payload: { productId, maxActivations: null, policyId: policy.id, customerId: customer.id },
  })
  if (license.statusCode !== 201) {
    throw new Error(`creating a license failed: ${license.body}`)
  }
  const activation = await app.inject({
    method: 'POST',
    url: `/api/v0/licenses/${license.json().id}/activations`,
    headers: admin,
    payload: { fingerprint: 'fixture-machine' },
  })
  if (activation.statusCode !== 201) {
    throw new Error(`creating an activation failed: ${activation.body}`)
  }
  const offlineActivation = await app.inject({
    method: 'POST',
    url: `/api/v0/licenses/${license.json().id}/activations`,
    headers: admin,
    payload: { fingerprint: 'fixture-offline-machine' },
  })
  if (offlineActivation.statusCode !== 201) {
    throw new Error(`creating an activation failed: ${offlineActivation.body}`)
  }
  const apiKey = await app.inject({
    method: 'POST',
    url: '/api/v0/api-keys',
    headers: admin,
    payload: { name: 'fixture key', role: 'product', productId },
  })
  if (apiKey.statusCode !== 201) {
    throw new Error(`creating an API key failed: ${apiKey.body}`)
  }
  const events = await app.inject({
    method: 'GET',
    url: '/api/v0/events?filter=type:eq:license.created&limit=1',
    headers: admin,
  })
  const eventId = events.json().data?.[0]?.id
  if (events.statusCode !== 200 || typeof eventId !== 'string') {
    throw new Error(`finding the license's event failed: ${events.body}`)
  }
  const endpoint = await app.inject({
    method: 'POST',
    url: '/api/v0/webhook-endpoints',
    headers: admin,
    payload: { url: 'https://127.0.0.1:9/fixture', eventTypes: ['license.created'], productId },
  })
  if (endpoint.statusCode !== 201) {
    throw new Error(`creating a webhook endpoint failed: ${endpoint.body}`)
  }
  const webhookEndpointId: string = endpoint.json().id
  let webhookDeliveryId = 'dlv_none'
  if (deliveries !== undefined) {
    await app.inject({
      method: 'POST',
      url: `/api/v0/webhook-endpoints/${webhookEndpointId}/test`,
      headers: admin,
    })
    await deliveries.tick()
    const list = await app.inject({
      method: 'GET',
      url: `/api/v0/webhook-endpoints/${webhookEndpointId}/deliveries`,
      headers: admin,
    })
    webhookDeliveryId = list.json().data?.[0]?.id ?? 'dlv_none'
  }
  const integration = await app.inject({
    method: 'POST',
    url: '/api/v0/integrations',
    headers: admin,
    payload: {
      provider: 'stripe',
      signingSecret: 'whsec_fixture_secret',
      mappings: [{ providerItemId: 'price_fixture', productId, policyId: policy.id }],
    },
  })
  if (integration.statusCode !== 201) {
    throw new Error(`creating an integration failed: ${integration.body}`)
  }
  return {
    productId,
    eventId,
    webhookEndpointId,
    integrationId: integration.json().id,
    webhookDeliveryId,
    licenseId: license.json().id,
    licenseKey: license.json().key,
    apiKeyId: apiKey.json().id,
    activationId: activation.json().id,
    offlineActivationId: offlineActivation.json().id,
    offlineActivationCreatedAt: offlineActivation.json().createdAt,
    customerId: customer.id,
    policyId: policy.id,
    entitlementId: entitlement.id,
    spareCustomerId: spareCustomer.id,
    sparePolicyId: sparePolicy.id,
  }
}

/** A route as the app registered it: method, full URL pattern and schema. */
export interface ServedRoute {
  readonly method: string
  /** With its prefix, e.g. `/api/v0/licenses/:id`. */
  readonly url: string
  readonly schema: Record<string, unknown> | undefined
}

/**
 * Records the API routes `app` registers (both prefixes, HEAD left out), so a test covers routes
 * added later without a list of its own. Call before the app is ready; read after `app.ready()`.
 */
export function recordServedRoutes(app: App): ServedRoute[] {
  const served: ServedRoute[] = []
  app.addHook('onRoute', (route) => {
    if (!/^\/(api\/)?v0\//.test(route.url)) {
      return
    }
    for (const method of [route.method].flat().filter((method) => method !== 'HEAD')) {
      const schema = route.schema as Record<string, unknown> | undefined
      served.push({ method, url: route.url, schema })
      // `/v0/…` is served by rewriting it to `/api/v0/…` (app.ts): the same route under its other name.
      if (route.url.startsWith('/api/v0/')) {
        served.push({ method, url: route.url.slice('/api'.length), schema })
      }
    }
  })
  return served
}
