import type {
  ActivateByKeyBody,
  ActivateLicenseBody,
  ActivationId,
  ActivationResource,
  ApiKeyId,
  ApiKeyResource,
  CreateApiKeyBody,
  CreatedApiKeyResource,
  CreateLicenseBody,
  CreateLicenseTokenBody,
  CreateLicenseTokenByKeyBody,
  CreateProductBody,
  DeactivateByKeyBody,
  LicenseId,
  LicenseResource,
  LicenseTokenResource,
  ListActivationsQuery,
  ListApiKeysQuery,
  ListLicensesQuery,
  ListProductKeysQuery,
  ListProductsQuery,
  Paginated,
  Problem,
  ProductId,
  ProductKeyResource,
  ProductResource,
  UpdateLicenseBody,
  UpdateProductBody,
  ValidateLicenseBody,
  ValidationResult,
} from '@keyturn/protocol'
import { KeyturnApiError, KeyturnConnectionError } from './errors.js'

export interface KeyturnClientOptions {
  /** The server's address, e.g. `https://licensing.example.com`; `/api/v0` is added. */
  readonly baseUrl: string
  /** An API key secret (`kt_admin_…` or `kt_prod_…`). */
  readonly apiKey: string
  /** A fetch implementation; defaults to the global one. */
  readonly fetch?: typeof fetch
}

type Query = Readonly<Record<string, string | number | undefined>>

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
 * const { isValid, reason } = await keyturn.validateLicense({ key: license.key, productId: license.productId })
 * ```
 */
export class KeyturnClient {
  readonly #apiUrl: string
  readonly #apiKey: string
  readonly #fetch: typeof fetch

  constructor(options: KeyturnClientOptions) {
    this.#apiUrl = `${options.baseUrl.replace(/\/+$/, '').replace(/\/api\/v0$/, '')}/api/v0`
    this.#apiKey = options.apiKey
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis)
  }

  // Licenses

  listLicenses(query: ListLicensesQuery = {}): Promise<Paginated<LicenseResource>> {
    return this.#request('GET', '/licenses', { query })
  }

  /** Every license matching the query, page after page (follows `starting_after`, so inserts never skip items). */
  iterateLicenses(
    query: Omit<ListLicensesQuery, 'page' | 'starting_after'> = {},
  ): AsyncGenerator<LicenseResource> {
    return this.#iterate((next) => this.listLicenses({ ...query, ...next }))
  }

  createLicense(body: CreateLicenseBody): Promise<LicenseResource> {
    return this.#request('POST', '/licenses', { body })
  }

  getLicense(id: LicenseId): Promise<LicenseResource> {
    return this.#request('GET', `/licenses/${encodeURIComponent(id)}`)
  }

  updateLicense(id: LicenseId, body: UpdateLicenseBody): Promise<LicenseResource> {
    return this.#request('PATCH', `/licenses/${encodeURIComponent(id)}`, { body })
  }

  revokeLicense(id: LicenseId): Promise<LicenseResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/revoke`)
  }

  reinstateLicense(id: LicenseId): Promise<LicenseResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/reinstate`)
  }

  /** Resolves for valid, expired, revoked and suspended licenses; rejects with `license_not_found` for unknown keys. */
  validateLicense(body: ValidateLicenseBody): Promise<ValidationResult> {
    return this.#request('POST', '/licenses/validate', { body })
  }

  createLicenseToken(id: LicenseId, body: CreateLicenseTokenBody = {}): Promise<LicenseTokenResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/tokens`, { body })
  }
  /** A token for the license whose key is presented: what an application with a `client` key calls. */
  createLicenseTokenByKey(body: CreateLicenseTokenByKeyBody): Promise<LicenseTokenResource> {
    return this.#request('POST', '/licenses/tokens', { body })
  }

  // Activations

  /** Resolves for a new activation and for a repeat of an activated fingerprint; rejects with `activation_limit_reached` when full. */
  activateLicense(id: LicenseId, body: ActivateLicenseBody): Promise<ActivationResource> {
    return this.#request('POST', `/licenses/${encodeURIComponent(id)}/activations`, { body })
  }

  activateLicenseByKey(body: ActivateByKeyBody): Promise<ActivationResource> {
    return this.#request('POST', '/licenses/activate', { body })
  }

  async deactivateLicenseByKey(body: DeactivateByKeyBody): Promise<void> {
    await this.#request<undefined>('POST', '/licenses/deactivate', { body })
  }

  listActivations(id: LicenseId, query: ListActivationsQuery = {}): Promise<Paginated<ActivationResource>> {
    return this.#request('GET', `/licenses/${encodeURIComponent(id)}/activations`, { query })
  }

  iterateActivations(
    id: LicenseId,
    query: Omit<ListActivationsQuery, 'page' | 'starting_after'> = {},
  ): AsyncGenerator<ActivationResource> {
    return this.#iterate((next) => this.listActivations(id, { ...query, ...next }))
  }

  getActivation(id: ActivationId): Promise<ActivationResource> {
    return this.#request('GET', `/activations/${encodeURIComponent(id)}`)
  }

  async deleteActivation(id: ActivationId): Promise<void> {
    await this.#request<undefined>('DELETE', `/activations/${encodeURIComponent(id)}`)
  }

  // Products

  listProducts(query: ListProductsQuery = {}): Promise<Paginated<ProductResource>> {
    return this.#request('GET', '/products', { query })
  }

  iterateProducts(
    query: Omit<ListProductsQuery, 'page' | 'starting_after'> = {},
  ): AsyncGenerator<ProductResource> {
    return this.#iterate((next) => this.listProducts({ ...query, ...next }))
  }

  createProduct(body: CreateProductBody): Promise<ProductResource> {
    return this.#request('POST', '/products', { body })
  }

  getProduct(id: ProductId): Promise<ProductResource> {
    return this.#request('GET', `/products/${encodeURIComponent(id)}`)
  }

  updateProduct(id: ProductId, body: UpdateProductBody): Promise<ProductResource> {
    return this.#request('PATCH', `/products/${encodeURIComponent(id)}`, { body })
  }

  suspendProduct(id: ProductId): Promise<ProductResource> {
    return this.#request('POST', `/products/${encodeURIComponent(id)}/suspend`)
  }

  resumeProduct(id: ProductId): Promise<ProductResource> {
    return this.#request('POST', `/products/${encodeURIComponent(id)}/resume`)
  }

  listProductKeys(id: ProductId, query: ListProductKeysQuery = {}): Promise<Paginated<ProductKeyResource>> {
    return this.#request('GET', `/products/${encodeURIComponent(id)}/keys`, { query })
  }

  rotateProductKey(id: ProductId): Promise<ProductKeyResource> {
    return this.#request('POST', `/products/${encodeURIComponent(id)}/keys/rotate`)
  }

  // API keys (admin only)

  listApiKeys(query: ListApiKeysQuery = {}): Promise<Paginated<ApiKeyResource>> {
    return this.#request('GET', '/api-keys', { query })
  }

  iterateApiKeys(
    query: Omit<ListApiKeysQuery, 'page' | 'starting_after'> = {},
  ): AsyncGenerator<ApiKeyResource> {
    return this.#iterate((next) => this.listApiKeys({ ...query, ...next }))
  }

  /** The response's `secret` is shown only here: store it. */
  createApiKey(body: CreateApiKeyBody): Promise<CreatedApiKeyResource> {
    return this.#request('POST', '/api-keys', { body })
  }

  getApiKey(id: ApiKeyId): Promise<ApiKeyResource> {
    return this.#request('GET', `/api-keys/${encodeURIComponent(id)}`)
  }

  async deleteApiKey(id: ApiKeyId): Promise<void> {
    await this.#request<undefined>('DELETE', `/api-keys/${encodeURIComponent(id)}`)
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

  async #request<T>(
    method: string,
    path: string,
    options: { query?: Query; body?: unknown } = {},
  ): Promise<T> {
    const url = new URL(`${this.#apiUrl}${path}`)
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) {
        url.searchParams.set(name, String(value))
      }
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#apiKey}`,
      accept: 'application/json',
    }
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json'
    }
    let response: Response
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      })
    } catch (error) {
      throw new KeyturnConnectionError(`Cannot reach the Keyturn server at ${url.origin}`, { cause: error })
    }
    if (response.status === 204) {
      return undefined as T // only deleteApiKey, typed void
    }
    // fetch resolves once the headers arrive: a connection that drops during the body rejects
    // here, and is as much a connection failure as one that never connected.
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      throw new KeyturnConnectionError(
        `The connection to ${url.origin} broke while reading the answer (HTTP ${response.status})`,
        { cause: error },
      )
    }
    let body: unknown
    try {
      body = text === '' ? undefined : JSON.parse(text)
    } catch (error) {
      throw new KeyturnConnectionError(
        `The server at ${url.origin} did not answer with JSON (HTTP ${response.status})`,
        {
          cause: error,
        },
      )
    }
    if (!response.ok) {
      throw new KeyturnApiError(toProblem(body, response))
    }
    return body as T // the server's response schemas are the contract for this shape
  }
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
