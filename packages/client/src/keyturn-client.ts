import type {
  ActivateByKeyBody,
  ActivateLicenseBody,
  ActivateOfflineBody,
  ActivationResource,
  ApiKeyResource,
  CreateApiKeyBody,
  CreateCustomerBody,
  CreatedApiKeyResource,
  CreateEntitlementBody,
  CreateIntegrationBody,
  CreateLicenseBody,
  CreateLicenseFileBody,
  CreateLicenseFileByKeyBody,
  CreateLicenseTokenBody,
  CreateLicenseTokenByKeyBody,
  CreatePolicyBody,
  CreateProductBody,
  CreateWebhookEndpointBody,
  CustomerResource,
  DeactivateByKeyBody,
  DeactivateOfflineBody,
  EmailResource,
  EntitlementResource,
  EventResource,
  HeartbeatByKeyBody,
  ImportLicensesBody,
  ImportLicensesResult,
  IncrementUsageBody,
  IncrementUsageByKeyBody,
  IntegrationEventResource,
  IntegrationResource,
  InviteOperatorBody,
  LicenseFileResource,
  LicenseResource,
  LicenseTokenResource,
  ListActivationsQuery,
  ListAllActivationsQuery,
  ListApiKeysQuery,
  ListCustomersQuery,
  ListEmailsQuery,
  ListEntitlementsQuery,
  ListEventsQuery,
  ListLicensesQuery,
  ListPoliciesQuery,
  ListProductKeysQuery,
  ListProductsQuery,
  ListWebhookDeliveriesQuery,
  ListWebhookEndpointsQuery,
  OfflineActivationResource,
  OperatorResource,
  OperatorSession,
  Paginated,
  PolicyResource,
  PortalSessionList,
  Problem,
  ProductKeyResource,
  ProductResource,
  ProviderLinkResource,
  RenewLicenseBody,
  SearchResult,
  Stats,
  StatsFailures,
  StatsFailuresQuery,
  StatsQuery,
  UpdateCustomerBody,
  UpdateEntitlementBody,
  UpdateIntegrationBody,
  UpdateLicenseBody,
  UpdateOperatorBody,
  UpdatePolicyBody,
  UpdateProductBody,
  UpdateWebhookEndpointBody,
  ValidateLicenseBody,
  ValidationResult,
  WebhookDeliveryResource,
  WebhookEndpointResource,
  WebhookEndpointWithSecretResource,
} from '../../protocol/src/index.js'
import { KeyturnApiError, KeyturnConnectionError } from './errors.js'
import { type Heartbeats, type StartHeartbeatsOptions, startHeartbeatLoop } from './heartbeats.js'
import type { Loose } from './ids.js'
import { checkSignedAnswer, newNonce, type SignedAnswer, serializeSignedAnswer } from './signed-answers.js'
import type { PublicKeyInput } from './validate-license-token.js'

export interface KeyturnClientOptions {
  /** The server's address, e.g. `https://licensing.example.com`; `/api/v0` is added. */
  readonly baseUrl: string
  /** An API key secret (`kt_admin_…` or `kt_prod_…`); or give `operatorSession` instead. */
  readonly apiKey?: string
  /**
   * Cookie mode, for a page of the server's own origin (the dashboard): no API key; the browser
   * sends the operator session cookie (`credentials: 'same-origin'`) and every write sends this CSRF
   * token (from signing in) in `X-Keyturn-Csrf`. POSTs carry no `Idempotency-Key` (the server keeps
   * those per API key; a call's `idempotencyKey` is not sent) and so are not retried.
   */
  readonly operatorSession?: { readonly csrfToken: string }
  /** A fetch implementation; defaults to the global one. */
  readonly fetch?: typeof fetch
  /** How long one attempt may take before it fails as a connection error; default 30 000 ms. */
  readonly timeoutMs?: number
  /**
   * Retries after a network error, a timeout, a 5xx, a 429 or `idempotency_key_in_progress`: of
   * GETs, and of POSTs, which carry an `Idempotency-Key` (one per call, made here unless given).
   * PATCH and DELETE are not retried. Default 2 retries; 0 turns retries (and the generated keys) off.
   */
  readonly maxRetries?: number
  /** The first retry waits up to this long (random "full jitter"), doubling each time; default 250 ms. */
  readonly retryBaseDelayMs?: number
  /** No wait is longer; a `Retry-After` asking for more is not waited for. Default 20 000 ms. */
  readonly retryMaxDelayMs?: number
  /** For tests: how to wait (default `setTimeout`) and the random source of the jitter (default `Math.random`). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  readonly random?: () => number
  /**
   * The product's public key (PEM or JWK as the API shows it), or several (current and retired).
   * When given, validate, activate, tokens, heartbeat and usage by key send a fresh nonce and `Keyturn-Sign: ed25519`
   * and accept only an answer signed by one of these keys for that request: anything else rejects
   * with `KeyturnSignatureError` (a fake server, a replayed or altered answer).
   */
  readonly publicKey?: PublicKeyInput | readonly PublicKeyInput[]
  /** How far a signed answer's `created` and `Date` may be from this machine's clock (default 300 s). */
  readonly signatureToleranceSeconds?: number
  /** This machine's clock, for the signature's time check (default: the system clock). */
  readonly now?: () => Date
}

/** The last argument of every method. */
export interface RequestOptions {
  /** Aborts the call, retries included; it then rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /** This call's attempt timeout, instead of the client's `timeoutMs`. */
  readonly timeoutMs?: number
  /** Sent as `Idempotency-Key` (POST): a retry of the same call, even from another process, is answered once. */
  readonly idempotencyKey?: string
}

/** The default `timeoutMs` of a client. */
export const defaultTimeoutMs = 30_000
/** The default `maxRetries` of a client. */
export const defaultMaxRetries = 2

type Query = Readonly<Record<string, string | number | undefined>>

interface RequestParts {
  readonly query?: Query
  readonly body?: unknown
  /**
   * A POST that may run twice with the effect of once (a validation changes nothing; a heartbeat
   * only moves a lease forward): retried like a GET, without a generated key and its stored answer.
   */
  readonly isRepeatable?: boolean
  /** An application-facing answer: with `publicKey`, sent with a nonce and checked (signed-answers.ts). */
  readonly isSigned?: boolean
  /** This call's signature check instead of the client's (`validateLicenseWithProof`). */
  readonly signWith?: SignaturePolicy
  /** Called with the checked answer and the nonce it echoes, before the call resolves. */
  readonly onSignedAnswer?: (answer: SignedAnswer, nonce: string) => void
}

/** How `validateLicenseWithProof` checks its answer. */
export interface ProofOptions {
  /** The product's public key(s); default: the client's `publicKey`. */
  readonly publicKey?: PublicKeyInput | readonly PublicKeyInput[]
  /** This machine's clock; default: the client's `now`. */
  readonly now?: () => Date
  /** How far the answer's signed time may be from `now` (default: the client's, else 300 s). */
  readonly toleranceSeconds?: number
}

/** A validation answer and the signed answer it came in, kept as text to be verified again later. */
export interface ValidationWithProof {
  readonly result: ValidationResult
  /** The signed HTTP answer (status, signature headers, body, the request's method, path and nonce) as JSON text. */
  readonly proof: string
}

interface SignaturePolicy {
  readonly publicKey: PublicKeyInput | readonly PublicKeyInput[]
  readonly toleranceSeconds: number
  readonly now: () => Date
}

interface RetryPolicy {
  readonly maxRetries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  readonly random: () => number
}

/**
 * A typed client for the Keyturn HTTP API: one method per operation, named after its operationId.
 * Refusals reject with `KeyturnApiError`; an unreachable server with `KeyturnConnectionError`.
 *
 * @example
 * ```ts
 * import { KeyturnClient } from '@keyturn/client'
 *
 * const keyturn = new KeyturnClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.KEYTURN_API_KEY })
 * const license = await keyturn.createLicense({ productId: 'prd_…', maxActivations: 3 })
 * // Per call: abort, a tighter timeout, or your own idempotency key (retries reuse it).
 * const same = await keyturn.getLicense(license.id, { signal: AbortSignal.timeout(2_000), timeoutMs: 1_000 })
 * const { isValid, reason } = await keyturn.validateLicense({ key: license.key, productId: license.productId })
 * ```
 */
export class KeyturnClient {
  readonly #apiUrl: string
  readonly #credentials: { readonly apiKey: string } | { readonly csrfToken: string }
  readonly #fetch: typeof fetch
  readonly #timeoutMs: number
  readonly #retry: RetryPolicy
  readonly #signature: SignaturePolicy | undefined

  constructor(options: KeyturnClientOptions) {
    this.#apiUrl = `${options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v0$/, '')}/api/v0`
    if ((options.apiKey === undefined) === (options.operatorSession === undefined)) {
      throw new TypeError('Give a KeyturnClient either apiKey or operatorSession.')
    }
    this.#credentials =
      options.apiKey !== undefined
        ? { apiKey: options.apiKey }
        : { csrfToken: options.operatorSession?.csrfToken ?? '' }
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.#timeoutMs = options.timeoutMs ?? defaultTimeoutMs
    this.#retry = {
      maxRetries: options.maxRetries ?? defaultMaxRetries,
      baseDelayMs: options.retryBaseDelayMs ?? 250,
      maxDelayMs: options.retryMaxDelayMs ?? 20_000,
      sleep: options.sleep ?? sleep,
      random: options.random ?? Math.random,
    }
    this.#signature =
      options.publicKey === undefined
        ? undefined
        : {
            publicKey: options.publicKey,
            toleranceSeconds: options.signatureToleranceSeconds ?? 300,
            now: options.now ?? (() => new Date()),
          }
  }

  // Licenses

  listLicenses(
    query: Loose<ListLicensesQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<LicenseResource>> {
    return this.#request('GET', '/licenses', { query, ...options })
  }

  /** Every license matching the query, page after page (follows `starting_after`, so inserts never skip items). */
  iterateLicenses(
    query: Omit<Loose<ListLicensesQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<LicenseResource> {
    return this.#iterate((next) => this.listLicenses({ ...query, ...next }, options))
  }

  createLicense(body: Loose<CreateLicenseBody>, options: RequestOptions = {}): Promise<LicenseResource> {
    return this.#request('POST', '/licenses', { body, ...options })
  }

  /**
   * Imports a batch of licenses from another licensing system (admin keys only): each row is created
   * as it was there, or answered `unchanged` when its externalId (or key) is already a license of
   * its product, or `error` with the problem (nothing of that row written).
   */
  importLicenses(
    body: Loose<ImportLicensesBody>,
    options: RequestOptions = {},
  ): Promise<ImportLicensesResult> {
    return this.#request('POST', '/licenses/import', { body, ...options })
  }

  getLicense(id: string, options: RequestOptions = {}): Promise<LicenseResource> {
    return this.#request('GET', `/licenses/${encodeURIComponent(id)}`, options)
  }

  updateLicense(
    id: string,
    body: Loose<UpdateLicenseBody>,
    options: RequestOptions = {},
  ): Promise<LicenseResource> {
    return this.#request('PATCH', `/licenses/${encodeURIComponent(id)}`, { body, ...options })
  }

  revokeLicense(id: string, options: RequestOptions = {}): Promise<LicenseResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/revoke`, options)
  }

  reinstateLicense(id: string, options: RequestOptions = {}): Promise<LicenseResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/reinstate`, options)
  }

  /**
   * Extends the license: max(now, expirationDate) + duration (default: its policy's). Pass an
   * `idempotencyKey` (e.g. the payment's id) so a retried renewal extends only once.
   */
  renewLicense(
    id: string,
    body: Loose<RenewLicenseBody> = {},
    options: RequestOptions = {},
  ): Promise<LicenseResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/renew`, { body, ...options })
  }

  /** Resolves for valid, expired, revoked and suspended licenses; rejects with `license_not_found` for unknown keys. */
  validateLicense(body: Loose<ValidateLicenseBody>, options: RequestOptions = {}): Promise<ValidationResult> {
    // The hot path: no generated Idempotency-Key, which would make every check a write on the server.
    return this.#request('POST', '/licenses/validate', {
      body,
      ...options,
      isRepeatable: true,
      isSigned: true,
    })
  }

  /**
   * `validateLicense` whose answer must be signed (by `options.publicKey`, else the client's key;
   * without either it rejects with a `TypeError`), resolving with the answer and its `proof`: the
   * signed HTTP answer as text, which the license guard stores and verifies again offline.
   *
   * @example
   * ```ts
   * const { result, proof } = await keyturn.validateLicenseWithProof({ key, productId }, { publicKey: PRODUCT_PUBLIC_KEY_PEM })
   * ```
   */
  async validateLicenseWithProof(
    body: Loose<ValidateLicenseBody>,
    options: RequestOptions & ProofOptions = {},
  ): Promise<ValidationWithProof> {
    const { publicKey, now, toleranceSeconds, ...requestOptions } = options
    const keys = publicKey ?? this.#signature?.publicKey
    if (keys === undefined) {
      throw new TypeError('validateLicenseWithProof needs a publicKey (in its options or the client’s)')
    }
    const signWith: SignaturePolicy = {
      publicKey: keys,
      toleranceSeconds: toleranceSeconds ?? this.#signature?.toleranceSeconds ?? 300,
      now: now ?? this.#signature?.now ?? (() => new Date()),
    }
    let proof: string | undefined
    const result = await this.#request<ValidationResult>('POST', '/licenses/validate', {
      body,
      ...requestOptions,
      isRepeatable: true,
      isSigned: true,
      signWith,
      onSignedAnswer: (answer, nonce) => {
        proof = serializeSignedAnswer(answer, nonce)
      },
    })
    if (proof === undefined) {
      throw new Error('The validation answer was not checked') // unreachable: isSigned with signWith
    }
    return { result, proof }
  }

  createLicenseToken(
    id: string,
    body: Loose<CreateLicenseTokenBody> = {},
    options: RequestOptions = {},
  ): Promise<LicenseTokenResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/tokens`, { body, ...options })
  }
  /** A token for the license whose key is presented: what an application with a `client` key calls. */
  createLicenseTokenByKey(
    body: Loose<CreateLicenseTokenByKeyBody>,
    options: RequestOptions = {},
  ): Promise<LicenseTokenResource> {
    return this.#request('POST', '/licenses/tokens', { body, ...options, isSigned: true })
  }

  // License files and offline activation

  /** A signed license file for offline use (docs/guides/offline.md). */
  createLicenseFile(
    id: string,
    body: Loose<CreateLicenseFileBody> = {},
    options: RequestOptions = {},
  ): Promise<LicenseFileResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/license-file`, { body, ...options })
  }

  /** A machine license file, bound to the activation's machine. */
  createActivationLicenseFile(
    id: string,
    body: Loose<CreateLicenseFileBody> = {},
    options: RequestOptions = {},
  ): Promise<LicenseFileResource> {
    return this.#request('POST', `/activations/${encodeURIComponent(id)}/license-file`, { body, ...options })
  }

  /** A license file for the license whose key is presented (for applications). */
  createLicenseFileByKey(
    body: Loose<CreateLicenseFileByKeyBody>,
    options: RequestOptions = {},
  ): Promise<LicenseFileResource> {
    return this.#request('POST', '/licenses/license-file', { body, ...options })
  }

  /** Activates a machine from its activation request file; answers the activation and its license file. */
  activateOffline(
    body: Loose<ActivateOfflineBody>,
    options: RequestOptions = {},
  ): Promise<OfflineActivationResource> {
    return this.#request('POST', '/licenses/activate-offline', { body, ...options })
  }

  /** Frees a machine's seat by the deactivation code it printed; rejects with `deactivation_code_invalid` when wrong. */
  async deactivateOffline(
    id: string,
    body: Loose<DeactivateOfflineBody>,
    options: RequestOptions = {},
  ): Promise<void> {
    await this.#request<undefined>('POST', `/activations/${encodeURIComponent(id)}/deactivate-offline`, {
      body,
      ...options,
    })
  }

  // Activations

  /** Resolves for a new activation and for a repeat of an activated fingerprint; rejects with `activation_limit_reached` when full. */
  activateLicense(
    id: string,
    body: Loose<ActivateLicenseBody>,
    options: RequestOptions = {},
  ): Promise<ActivationResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/activations`, { body, ...options })
  }

  activateLicenseByKey(
    body: Loose<ActivateByKeyBody>,
    options: RequestOptions = {},
  ): Promise<ActivationResource> {
    return this.#request('POST', '/licenses/activate', { body, ...options, isSigned: true })
  }

  async deactivateLicenseByKey(
    body: Loose<DeactivateByKeyBody>,
    options: RequestOptions = {},
  ): Promise<void> {
    await this.#request<undefined>('POST', '/licenses/deactivate', { body, ...options })
  }

  /** Renews a floating seat's lease; rejects with `activation_not_found` once it has lapsed. */
  heartbeatLicenseByKey(
    body: Loose<HeartbeatByKeyBody>,
    options: RequestOptions = {},
  ): Promise<ActivationResource> {
    return this.#request('POST', '/licenses/heartbeat', {
      body,
      ...options,
      isRepeatable: true,
      isSigned: true,
    })
  }

  heartbeatActivation(id: string, options: RequestOptions = {}): Promise<ActivationResource> {
    return this.#request('POST', `/activations/${encodeURIComponent(id)}/heartbeat`, {
      ...options,
      isRepeatable: true,
    })
  }

  /**
   * Takes a seat for this machine and keeps it with heartbeats at half the license's `heartbeatTtl`,
   * retrying failures with backoff; `onSeatLost` reports a lapsed or revoked seat (the loop then
   * tries to take it again). Rejects like `activateLicenseByKey` when no seat is free.
   *
   * @example
   * ```ts
   * const seat = await keyturn.startHeartbeats({
   *   key: licenseKey,
   *   productId: 'prd_3kTMd9qA8xYb2VnLr5sPwZ',
   *   fingerprint: machineId,
   *   onSeatLost: () => showLicenseDialog(),
   * })
   * // … when the application quits: free the seat at once
   * await seat.stop()
   * ```
   */
  startHeartbeats(options: StartHeartbeatsOptions): Promise<Heartbeats> {
    return startHeartbeatLoop(this, options)
  }

  listActivations(
    id: string,
    query: Loose<ListActivationsQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<ActivationResource>> {
    return this.#request('GET', `/licenses/${encodeURIComponent(id)}/activations`, { query, ...options })
  }

  iterateActivations(
    id: string,
    query: Omit<Loose<ListActivationsQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<ActivationResource> {
    return this.#iterate((next) => this.listActivations(id, { ...query, ...next }, options))
  }

  /**
   * Every license's activations the key may see (a product key: its product's), newest first;
   * `productId` and `licenseId` narrow it. A lapsed floating seat is not listed.
   */
  listAllActivations(
    query: Loose<ListAllActivationsQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<ActivationResource>> {
    return this.#request('GET', '/activations', { query, ...options })
  }

  iterateAllActivations(
    query: Omit<Loose<ListAllActivationsQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<ActivationResource> {
    return this.#iterate((next) => this.listAllActivations({ ...query, ...next }, options))
  }

  getActivation(id: string, options: RequestOptions = {}): Promise<ActivationResource> {
    return this.#request('GET', `/activations/${encodeURIComponent(id)}`, options)
  }

  async deleteActivation(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/activations/${encodeURIComponent(id)}`, options)
  }

  // Metered usage

  /** Adds `increment` (default 1) to `uses`; rejects with `usage_limit_reached` (nothing added) past `maxUses`. */
  incrementLicenseUsageByKey(
    body: Loose<IncrementUsageByKeyBody>,
    options: RequestOptions = {},
  ): Promise<LicenseResource> {
    return this.#request('POST', '/licenses/usage', { body, ...options, isSigned: true })
  }

  incrementLicenseUsage(
    id: string,
    body: Loose<IncrementUsageBody> = {},
    options: RequestOptions = {},
  ): Promise<LicenseResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/usage`, { body, ...options })
  }

  resetLicenseUsage(id: string, options: RequestOptions = {}): Promise<LicenseResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/usage/reset`, options)
  }

  // Products

  listProducts(
    query: Loose<ListProductsQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<ProductResource>> {
    return this.#request('GET', '/products', { query, ...options })
  }

  iterateProducts(
    query: Omit<Loose<ListProductsQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<ProductResource> {
    return this.#iterate((next) => this.listProducts({ ...query, ...next }, options))
  }

  createProduct(body: Loose<CreateProductBody>, options: RequestOptions = {}): Promise<ProductResource> {
    return this.#request('POST', '/products', { body, ...options })
  }

  getProduct(id: string, options: RequestOptions = {}): Promise<ProductResource> {
    return this.#request('GET', `/products/${encodeURIComponent(id)}`, options)
  }

  updateProduct(
    id: string,
    body: Loose<UpdateProductBody>,
    options: RequestOptions = {},
  ): Promise<ProductResource> {
    return this.#request('PATCH', `/products/${encodeURIComponent(id)}`, { body, ...options })
  }

  suspendProduct(id: string, options: RequestOptions = {}): Promise<ProductResource> {
    return this.#request('POST', `/products/${encodeURIComponent(id)}/suspend`, options)
  }

  resumeProduct(id: string, options: RequestOptions = {}): Promise<ProductResource> {
    return this.#request('POST', `/products/${encodeURIComponent(id)}/resume`, options)
  }

  listProductKeys(
    id: string,
    query: Loose<ListProductKeysQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<ProductKeyResource>> {
    return this.#request('GET', `/products/${encodeURIComponent(id)}/keys`, { query, ...options })
  }

  rotateProductKey(id: string, options: RequestOptions = {}): Promise<ProductKeyResource> {
    return this.#request('POST', `/products/${encodeURIComponent(id)}/keys/rotate`, options)
  }

  // Search (admin and product keys; a product key finds only its product's objects)

  /**
   * Licenses, customers and machines a support person's query names: a license key (any case, with
   * or without dashes), an email, a name prefix, a fingerprint or an id. At most 20 hits.
   */
  search(q: string, options: RequestOptions = {}): Promise<SearchResult> {
    return this.#request('GET', '/search', { query: { q }, ...options })
  }

  // Statistics (admin and product keys; a product key sees its own product)

  /**
   * Daily counts per UTC day from `from` to `to` (default: the last 30 days; at most 366), for one
   * product or every product the key sees, summed: validations (valid and not), machines activated
   * and deactivated, licenses created, renewed and revoked; and the figures of now (active
   * machines, licenses expiring within 30 days).
   */
  stats(query: StatsQuery = {}, options: RequestOptions = {}): Promise<Stats> {
    return this.#request('GET', '/stats', { query: { ...query }, ...options })
  }

  /**
   * The latest failures (at most 20 of each): webhook deliveries whose last attempt failed, and the
   * clients the rate limits refused (recorded by the serving process since it started).
   */
  statsFailures(query: StatsFailuresQuery = {}, options: RequestOptions = {}): Promise<StatsFailures> {
    return this.#request('GET', '/stats/failures', { query: { ...query }, ...options })
  }

  // Customers (global; a product key sees those owning a license of its product)

  listCustomers(
    query: Loose<ListCustomersQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<CustomerResource>> {
    return this.#request('GET', '/customers', { query, ...options })
  }

  iterateCustomers(
    query: Omit<Loose<ListCustomersQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<CustomerResource> {
    return this.#iterate((next) => this.listCustomers({ ...query, ...next }, options))
  }

  /** Rejects with `customer_email_taken` when another customer has the email (case-insensitively). */
  createCustomer(body: Loose<CreateCustomerBody>, options: RequestOptions = {}): Promise<CustomerResource> {
    return this.#request('POST', '/customers', { body, ...options })
  }

  getCustomer(id: string, options: RequestOptions = {}): Promise<CustomerResource> {
    return this.#request('GET', `/customers/${encodeURIComponent(id)}`, options)
  }

  /** `metadata` is merged key by key; a key set to `null` is removed. */
  updateCustomer(
    id: string,
    body: Loose<UpdateCustomerBody>,
    options: RequestOptions = {},
  ): Promise<CustomerResource> {
    return this.#request('PATCH', `/customers/${encodeURIComponent(id)}`, { body, ...options })
  }

  /** Rejects with `customer_has_licenses` while licenses belong to the customer. */
  async deleteCustomer(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/customers/${encodeURIComponent(id)}`, options)
  }

  // The customer portal (admin keys)

  /** Mails the customer a portal sign-in code; rejects with `portal_unavailable` while the portal or mail is off. */
  async sendPortalLink(customerId: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>(
      'POST',
      `/customers/${encodeURIComponent(customerId)}/portal-link`,
      options,
    )
  }

  /** The customer's live portal sessions, newest first. */
  listPortalSessions(customerId: string, options: RequestOptions = {}): Promise<PortalSessionList> {
    return this.#request('GET', `/customers/${encodeURIComponent(customerId)}/portal-sessions`, options)
  }

  /** Signs the customer out of one portal session (nothing to do when it has ended already). */
  async revokePortalSession(
    customerId: string,
    sessionId: string,
    options: RequestOptions = {},
  ): Promise<void> {
    await this.#request<undefined>(
      'DELETE',
      `/customers/${encodeURIComponent(customerId)}/portal-sessions/${encodeURIComponent(sessionId)}`,
      options,
    )
  }

  // Entitlements

  listEntitlements(
    query: Loose<ListEntitlementsQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<EntitlementResource>> {
    return this.#request('GET', '/entitlements', { query, ...options })
  }

  iterateEntitlements(
    query: Omit<Loose<ListEntitlementsQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<EntitlementResource> {
    return this.#iterate((next) => this.listEntitlements({ ...query, ...next }, options))
  }

  createEntitlement(
    body: Loose<CreateEntitlementBody>,
    options: RequestOptions = {},
  ): Promise<EntitlementResource> {
    return this.#request('POST', '/entitlements', { body, ...options })
  }

  getEntitlement(id: string, options: RequestOptions = {}): Promise<EntitlementResource> {
    return this.#request('GET', `/entitlements/${encodeURIComponent(id)}`, options)
  }

  updateEntitlement(
    id: string,
    body: Loose<UpdateEntitlementBody>,
    options: RequestOptions = {},
  ): Promise<EntitlementResource> {
    return this.#request('PATCH', `/entitlements/${encodeURIComponent(id)}`, { body, ...options })
  }

  /** Also detaches it from every policy and license. */
  async deleteEntitlement(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/entitlements/${encodeURIComponent(id)}`, options)
  }

  // Policies

  listPolicies(
    query: Loose<ListPoliciesQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<PolicyResource>> {
    return this.#request('GET', '/policies', { query, ...options })
  }

  iteratePolicies(
    query: Omit<Loose<ListPoliciesQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<PolicyResource> {
    return this.#iterate((next) => this.listPolicies({ ...query, ...next }, options))
  }

  createPolicy(body: Loose<CreatePolicyBody>, options: RequestOptions = {}): Promise<PolicyResource> {
    return this.#request('POST', '/policies', { body, ...options })
  }

  getPolicy(id: string, options: RequestOptions = {}): Promise<PolicyResource> {
    return this.#request('GET', `/policies/${encodeURIComponent(id)}`, options)
  }

  updatePolicy(
    id: string,
    body: Loose<UpdatePolicyBody>,
    options: RequestOptions = {},
  ): Promise<PolicyResource> {
    return this.#request('PATCH', `/policies/${encodeURIComponent(id)}`, { body, ...options })
  }

  /** Rejects with `policy_in_use` while licenses made from it exist. */
  async deletePolicy(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/policies/${encodeURIComponent(id)}`, options)
  }

  // API keys (admin only)

  listApiKeys(
    query: Loose<ListApiKeysQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<ApiKeyResource>> {
    return this.#request('GET', '/api-keys', { query, ...options })
  }

  iterateApiKeys(
    query: Omit<Loose<ListApiKeysQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<ApiKeyResource> {
    return this.#iterate((next) => this.listApiKeys({ ...query, ...next }, options))
  }

  /** The response's `secret` is shown only here: store it. */
  createApiKey(body: Loose<CreateApiKeyBody>, options: RequestOptions = {}): Promise<CreatedApiKeyResource> {
    return this.#request('POST', '/api-keys', { body, ...options })
  }

  /** The key this client is signed in with (its role, product and id; never its secret). Admin and product keys. */
  getCurrentApiKey(options: RequestOptions = {}): Promise<ApiKeyResource> {
    return this.#request('GET', '/api-keys/current', options)
  }

  getApiKey(id: string, options: RequestOptions = {}): Promise<ApiKeyResource> {
    return this.#request('GET', `/api-keys/${encodeURIComponent(id)}`, options)
  }

  async deleteApiKey(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/api-keys/${encodeURIComponent(id)}`, options)
  }

  // Operator accounts (only for a signed-in operator: cookie mode)

  listOperators(options: RequestOptions = {}): Promise<{ data: OperatorResource[] }> {
    return this.#request('GET', '/operators', options)
  }

  /** An invited operator and its one-time invitation link (shown only in this answer; `mailed`: also mailed). */
  inviteOperator(
    body: Loose<InviteOperatorBody>,
    options: RequestOptions = {},
  ): Promise<{ operator: OperatorResource; invitationUrl: string; mailed: boolean }> {
    return this.#request('POST', '/operators', { ...options, body })
  }

  getOperator(id: string, options: RequestOptions = {}): Promise<OperatorResource> {
    return this.#request('GET', `/operators/${encodeURIComponent(id)}`, options)
  }

  updateOperator(
    id: string,
    body: Loose<UpdateOperatorBody>,
    options: RequestOptions = {},
  ): Promise<OperatorResource> {
    return this.#request('PATCH', `/operators/${encodeURIComponent(id)}`, { ...options, body })
  }

  /** A one-time password-reset link for an operator (owners only; shown only in this answer; `mailed`: also mailed). */
  createOperatorPasswordReset(
    id: string,
    options: RequestOptions = {},
  ): Promise<{ resetUrl: string; mailed: boolean }> {
    return this.#request('POST', `/operators/${encodeURIComponent(id)}/password-reset`, options)
  }

  /** An operator's signed-in browsers (owners only). */
  listOperatorSessions(id: string, options: RequestOptions = {}): Promise<{ data: OperatorSession[] }> {
    return this.#request('GET', `/operators/${encodeURIComponent(id)}/sessions`, options)
  }

  async revokeOperatorSession(id: string, sessionId: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>(
      'DELETE',
      `/operators/${encodeURIComponent(id)}/sessions/${encodeURIComponent(sessionId)}`,
      options,
    )
  }

  /** Signs the operator out everywhere (owners only). */
  async revokeOperatorSessions(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/operators/${encodeURIComponent(id)}/sessions`, options)
  }

  // Events (the audit log; an admin key sees every event, a product key its product's)

  listEvents(
    query: Loose<ListEventsQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<EventResource>> {
    return this.#request('GET', '/events', { query, ...options })
  }

  /** Every event matching the query, newest first by default, page after page. */
  iterateEvents(
    query: Omit<Loose<ListEventsQuery>, 'page' | 'starting_after'> = {},
    options: RequestOptions = {},
  ): AsyncGenerator<EventResource> {
    return this.#iterate((next) => this.listEvents({ ...query, ...next }, options))
  }

  getEvent(id: string, options: RequestOptions = {}): Promise<EventResource> {
    return this.#request('GET', `/events/${encodeURIComponent(id)}`, options)
  }

  // The mail delivery log (admin keys): what was mailed to which customer and how it went, never the message

  listEmails(
    query: Loose<ListEmailsQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<EmailResource>> {
    return this.#request('GET', '/emails', { query, ...options })
  }

  // Webhook endpoints and deliveries

  listWebhookEndpoints(
    query: Loose<ListWebhookEndpointsQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<WebhookEndpointResource>> {
    return this.#request('GET', '/webhook-endpoints', { query, ...options })
  }

  /** The response's `secret` (`whsec_…`) is shown only here: give it to your receiver. */
  createWebhookEndpoint(
    body: Loose<CreateWebhookEndpointBody>,
    options: RequestOptions = {},
  ): Promise<WebhookEndpointWithSecretResource> {
    return this.#request('POST', '/webhook-endpoints', { body, ...options })
  }

  getWebhookEndpoint(id: string, options: RequestOptions = {}): Promise<WebhookEndpointResource> {
    return this.#request('GET', `/webhook-endpoints/${encodeURIComponent(id)}`, options)
  }

  updateWebhookEndpoint(
    id: string,
    body: Loose<UpdateWebhookEndpointBody>,
    options: RequestOptions = {},
  ): Promise<WebhookEndpointResource> {
    return this.#request('PATCH', `/webhook-endpoints/${encodeURIComponent(id)}`, { body, ...options })
  }

  async deleteWebhookEndpoint(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/webhook-endpoints/${encodeURIComponent(id)}`, options)
  }

  /** A new `secret`, shown only here; the old one stops signing at once. */
  rotateWebhookEndpointSecret(
    id: string,
    options: RequestOptions = {},
  ): Promise<WebhookEndpointWithSecretResource> {
    return this.#request('POST', `/webhook-endpoints/${encodeURIComponent(id)}/rotate-secret`, options)
  }

  /** Sends a `webhook_endpoint.test` event to this endpoint only. */
  testWebhookEndpoint(id: string, options: RequestOptions = {}): Promise<WebhookEndpointResource> {
    return this.#request('POST', `/webhook-endpoints/${encodeURIComponent(id)}/test`, options)
  }

  listWebhookDeliveries(
    id: string,
    query: Loose<ListWebhookDeliveriesQuery> = {},
    options: RequestOptions = {},
  ): Promise<Paginated<WebhookDeliveryResource>> {
    return this.#request('GET', `/webhook-endpoints/${encodeURIComponent(id)}/deliveries`, {
      query,
      ...options,
    })
  }

  retryWebhookDelivery(id: string, options: RequestOptions = {}): Promise<WebhookDeliveryResource> {
    return this.#request('POST', `/webhook-deliveries/${encodeURIComponent(id)}/retry`, options)
  }

  // Payment-provider integrations (admin keys)

  listIntegrations(options: RequestOptions = {}): Promise<{ object: 'list'; data: IntegrationResource[] }> {
    return this.#request('GET', '/integrations', options)
  }

  /** The signing secret is stored encrypted and never returned. */
  createIntegration(
    body: Loose<CreateIntegrationBody>,
    options: RequestOptions = {},
  ): Promise<IntegrationResource> {
    return this.#request('POST', '/integrations', { body, ...options })
  }

  getIntegration(id: string, options: RequestOptions = {}): Promise<IntegrationResource> {
    return this.#request('GET', `/integrations/${encodeURIComponent(id)}`, options)
  }

  updateIntegration(
    id: string,
    body: Loose<UpdateIntegrationBody>,
    options: RequestOptions = {},
  ): Promise<IntegrationResource> {
    return this.#request('PATCH', `/integrations/${encodeURIComponent(id)}`, { body, ...options })
  }

  async deleteIntegration(id: string, options: RequestOptions = {}): Promise<void> {
    await this.#request<undefined>('DELETE', `/integrations/${encodeURIComponent(id)}`, options)
  }

  /** The latest provider events the integration received, newest first, with what each did. */
  /** The payment-provider objects (orders, subscriptions…) a license was sold or renewed through. */
  listLicenseProviderLinks(
    id: string,
    options: RequestOptions = {},
  ): Promise<{ object: 'list'; data: ProviderLinkResource[] }> {
    return this.#request('GET', `/licenses/${encodeURIComponent(id)}/provider-links`, options)
  }

  listIntegrationEvents(
    id: string,
    options: RequestOptions = {},
  ): Promise<{ object: 'list'; data: IntegrationEventResource[] }> {
    return this.#request('GET', `/integrations/${encodeURIComponent(id)}/events`, options)
  }

  async *#iterate<T extends { id: string }>(
    list: (next: { starting_after?: string }) => Promise<Paginated<T>>,
  ): AsyncGenerator<T> {
    let startingAfter: string | undefined
    for (;;) {
      const page = await list(startingAfter === undefined ? {} : { starting_after: startingAfter })
      yield* page.data
      const last = page.data.at(-1)
      if (!page.hasNextPage || last === undefined) {
        return
      }
      startingAfter = last.id
    }
  }

  async #request<T>(method: string, path: string, options: RequestOptions & RequestParts = {}): Promise<T> {
    const url = new URL(`${this.#apiUrl}${path}`)
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) {
        url.searchParams.set(name, String(value))
      }
    }
    const credentials = this.#credentials
    const headers: Record<string, string> = { accept: 'application/json' }
    if ('apiKey' in credentials) {
      headers.authorization = `Bearer ${credentials.apiKey}`
    } else if (method !== 'GET') {
      headers['x-keyturn-csrf'] = credentials.csrfToken
    }
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json'
    }
    // A POST is retried only with an Idempotency-Key: the server then answers a retry with the first
    // response instead of running it twice. With retries on, each call gets its own key.
    // Cookie mode sends none: the server keeps Idempotency-Keys per API key.
    const idempotencyKey = !('apiKey' in credentials)
      ? undefined
      : (options.idempotencyKey ??
        (method === 'POST' && !options.isRepeatable && this.#retry.maxRetries > 0
          ? newIdempotencyKey()
          : undefined))
    if (idempotencyKey !== undefined) {
      headers['idempotency-key'] = idempotencyKey
    }
    const isRetryable =
      method === 'GET' || options.isRepeatable === true || (method === 'POST' && idempotencyKey !== undefined)
    // One nonce per call (its retries resend the same body): the answer must echo it, signed.
    const signature = options.isSigned === true ? (options.signWith ?? this.#signature) : undefined
    const nonce = signature === undefined ? undefined : newNonce()
    const body = nonce === undefined ? options.body : { ...(options.body as object), nonce }
    if (nonce !== undefined) {
      headers['keyturn-sign'] = 'ed25519'
    }
    const check = signature === undefined || nonce === undefined ? undefined : { signature, nonce }
    const init: RequestInit = {
      method,
      headers,
      ...('apiKey' in credentials ? {} : { credentials: 'same-origin' as const }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }
    const timeoutMs = options.timeoutMs ?? this.#timeoutMs
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#attempt<T>(url, init, timeoutMs, options.signal, check, options.onSignedAnswer)
      } catch (error) {
        const delayMs = isRetryable ? this.#retryDelay(error, attempt) : undefined
        if (delayMs === undefined || options.signal?.aborted) {
          throw error
        }
        await this.#retry.sleep(delayMs, options.signal)
      }
    }
  }

  /** How long to wait before retrying after `error`, or undefined to give up. */
  #retryDelay(error: unknown, attempt: number): number | undefined {
    const { maxRetries, baseDelayMs, maxDelayMs, random } = this.#retry
    if (attempt >= maxRetries) {
      return undefined
    }
    const backoff = random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt) // "full jitter"
    if (error instanceof KeyturnConnectionError) {
      return backoff
    }
    if (
      error instanceof KeyturnApiError &&
      (error.status >= 500 || error.status === 429 || error.code === 'idempotency_key_in_progress')
    ) {
      if (error.retryAfterMs === undefined) {
        return backoff
      }
      // The server said when: wait that long, unless it is longer than we would ever wait.
      return error.retryAfterMs <= maxDelayMs ? Math.max(error.retryAfterMs, backoff) : undefined
    }
    return undefined
  }

  async #attempt<T>(
    url: URL,
    init: RequestInit,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    check?: { signature: SignaturePolicy; nonce: string },
    onSignedAnswer?: (answer: SignedAnswer, nonce: string) => void,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(timeoutMs)
    const signals = signal === undefined ? [timeout] : [signal, timeout]
    const failure = (message: string, error: unknown): Error => {
      if (signal?.aborted) {
        return signal.reason instanceof Error ? signal.reason : new DOMException('Aborted', 'AbortError')
      }
      if (timeout.aborted) {
        return new KeyturnConnectionError(`No answer from ${url.origin} within ${timeoutMs} ms`, {
          cause: error,
        })
      }
      return new KeyturnConnectionError(message, { cause: error })
    }
    let response: Response
    try {
      response = await this.#fetch(url, { ...init, signal: AbortSignal.any(signals) })
    } catch (error) {
      throw failure(`Cannot reach the Keyturn server at ${url.origin}`, error)
    }
    if (response.status === 204) {
      return undefined as T // only the deletes, typed void
    }
    // fetch resolves once the headers arrive: a connection that drops during the body rejects
    // here, and is as much a connection failure as one that never connected.
    let bytes: Uint8Array
    try {
      bytes = new Uint8Array(await response.arrayBuffer())
    } catch (error) {
      throw failure(
        `The connection to ${url.origin} broke while reading the answer (HTTP ${response.status})`,
        error,
      )
    }
    const text = new TextDecoder().decode(bytes)
    let body: unknown
    try {
      body = text === '' ? undefined : JSON.parse(text)
    } catch (error) {
      if (response.status >= 500 || response.status === 429) {
        // A proxy's own error page: the status is what matters, and it may be retried.
        throw new KeyturnApiError(toProblem(undefined, response), retryAfterOf(response))
      }
      throw new KeyturnConnectionError(
        `The server at ${url.origin} did not answer with JSON (HTTP ${response.status})`,
        { cause: error },
      )
    }
    if (!response.ok) {
      throw new KeyturnApiError(toProblem(body, response), retryAfterOf(response))
    }
    if (check !== undefined) {
      const { signature, nonce } = check
      const answer = {
        status: response.status,
        headers: response.headers,
        body: bytes,
        json: body,
        method: init.method ?? 'GET',
        path: url.pathname,
      }
      await checkSignedAnswer(answer, {
        publicKey: signature.publicKey,
        nonce,
        now: signature.now(),
        toleranceSeconds: signature.toleranceSeconds,
      })
      onSignedAnswer?.(answer, nonce)
    }
    return body as T // the server's response schemas are the contract for this shape
  }
}

/** `Retry-After` in milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
function retryAfterOf(response: Response): number | undefined {
  const value = response.headers.get('retry-after')?.trim()
  if (value === undefined || value === '') {
    return undefined
  }
  if (/^\d+$/.test(value)) {
    return Number(value) * 1000
  }
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** A random UUID; `crypto.randomUUID` exists only in secure contexts (https, localhost) of browsers. */
function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') {
    return crypto.randomUUID()
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

function toProblem(body: unknown, response: Response): Problem {
  if (typeof body === 'object' && body !== null && 'code' in body && 'detail' in body) {
    return body as Problem // a problem+json body from the server
  }
  return {
    type: 'about:blank',
    title: response.statusText,
    status: response.status,
    detail: `HTTP ${response.status} without a problem body`,
    code: response.status >= 500 ? 'internal_error' : 'bad_request',
    requestId: response.headers.get('request-id') ?? '',
  }
}
