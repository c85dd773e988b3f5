import { timingSafeEqual } from 'node:crypto'
import type { ApiKeyId, CreateApiKeyBody, ListApiKeysQuery, Paginated } from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newApiKeySecret, newId } from '../core/ids.js'
import { pageOf, parseListQuery, toPage } from '../core/list-query.js'
import {
  type ApiKeyPrincipal,
  type Principal,
  requireAdmin,
  requireManagementKey,
} from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import { digestSecret, digestsEqual } from '../core/secrets.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import { type ApiKey, displayPrefix, secretPrefixes } from './api-key.js'
import { toApiKeyResource } from './api-key-resource.js'
import { type ApiKeyStore, apiKeyListSpec } from './api-key-store.js'

export interface ApiKeyServiceDeps {
  readonly apiKeys: ApiKeyStore
  /** Writes: the change and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly apiKeys: ApiKeyStore }>
  readonly products: ProductLookup
  readonly clock: Clock
  /** Keys the HMAC of stored digests (derived from KEYTURN_SECRET). */
  readonly digestKey: Buffer
}

/** Longest bearer secret looked at; anything longer is refused before hashing. */
const maxSecretLength = 256

interface ConnectionRecall {
  readonly secret: Buffer
  readonly principal: ApiKeyPrincipal
  /** `#forgotten` when it was kept. */
  readonly forgotten: number
}

/** Principals kept for `authenticate`'s `recall`, by digest; the map starts over when full (a Keyturn holds a few keys). */
const maxRecalled = 1024

export class ApiKeyService {
  readonly #apiKeys: ApiKeyStore
  readonly #storage: UnitOfWork<{ readonly apiKeys: ApiKeyStore }>
  readonly #products: ProductLookup
  readonly #clock: Clock
  readonly #digestKey: Buffer
  /** What each secret stood for when `authenticate` last read it here, by digest. */
  readonly #read = new Map<string, ApiKeyPrincipal>()
  /** Per connection, the secret it last sent and what it stood for (`recall` with a `connection`). */
  readonly #byConnection = new WeakMap<object, ConnectionRecall>()
  /** Moves on with every `forget`: what connections recalled before it is read again. */
  #forgotten = 0

  constructor(deps: ApiKeyServiceDeps) {
    this.#apiKeys = deps.apiKeys
    this.#storage = deps.storage
    this.#products = deps.products
    this.#clock = deps.clock
    this.#digestKey = deps.digestKey
  }

  /**
   * The principal a bearer secret stands for, or undefined. Read from the database, so a deleted key
   * fails at once, and remembered in this process.
   *
   * Fast path (docs/decisions/0016-api-key-confirmation.md), `recall`: a key this process has read before is taken as it was then,
   * without reading it again. Not a decision by itself: only for a route whose own statement then
   * confirms that the key still exists, in the same snapshot as everything else it decides on
   * (the routes with config.confirmsApiKey; docs/decisions/0016-api-key-confirmation.md lists
   * them), so its answer is as fresh as a read here, and the
   * request costs one statement, not two. A key's role and product never change; deleting it is the only change to confirm.
   * Measured on PostgreSQL (200k licenses, bench/builds.mjs, 6 interleaved rounds): 4,440 → 6,858
   * validations/s, 185 → 121 µs of main-thread CPU each (docs/decisions/0016-api-key-confirmation.md).
   */
  async authenticate(
    secret: string,
    options: {
      readonly recall?: boolean
      /**
       * The request's connection (its socket): with `recall`, a connection that sends the secret it
       * sent last is taken at its word without the digest's HMAC, compared in constant time
       * (docs/decisions/0054-sqlite-validation-reader.md: the HMAC was ~15 µs of a validation).
       */
      readonly connection?: object
    } = {},
  ): Promise<ApiKeyPrincipal | undefined> {
    if (secret.length === 0 || secret.length > maxSecretLength) {
      return undefined
    }
    const { connection } = options
    // Taken before any read: a key forgotten while this one reads is not kept as it was.
    const forgotten = this.#forgotten
    const sent = connection === undefined ? undefined : Buffer.from(secret)
    if (options.recall === true && connection !== undefined && sent !== undefined) {
      const last = this.#byConnection.get(connection)
      if (
        last !== undefined &&
        last.forgotten === forgotten &&
        last.secret.length === sent.length &&
        timingSafeEqual(last.secret, sent)
      ) {
        return last.principal
      }
    }
    const digest = digestSecret(this.#digestKey, secret)
    const known = options.recall === true ? this.#read.get(digest) : undefined
    if (known !== undefined) {
      this.#recallOn(connection, { secret: sent, principal: known, forgotten })
      return known
    }
    const apiKey = await this.#apiKeys.findByDigest(digest)
    // The lookup matched on the digest; comparing again in constant time costs nothing and keeps the
    // decision independent of how the database compares strings.
    if (apiKey === undefined || !digestsEqual(apiKey.digest, digest)) {
      return undefined
    }
    const principal: ApiKeyPrincipal | undefined =
      apiKey.role === 'admin'
        ? { role: 'admin', apiKeyId: apiKey.id }
        : apiKey.productId === null
          ? undefined
          : { role: apiKey.role, apiKeyId: apiKey.id, productId: apiKey.productId }
    if (principal !== undefined) {
      if (this.#read.size >= maxRecalled) {
        this.#read.clear()
      }
      this.#read.set(digest, principal)
      this.#recallOn(connection, { secret: sent, principal, forgotten })
    }
    return principal
  }

  #recallOn(
    connection: object | undefined,
    recall: Omit<ConnectionRecall, 'secret'> & { readonly secret: Buffer | undefined },
  ): void {
    if (connection !== undefined && recall.secret !== undefined) {
      this.#byConnection.set(connection, { ...recall, secret: recall.secret })
    }
  }

  /** A statement found the key gone (see `authenticate`'s `recall`): its next request reads it. */
  forget(apiKeyId: ApiKeyId): void {
    this.#forgotten += 1
    for (const [digest, principal] of this.#read) {
      if (principal.apiKeyId === apiKeyId) {
        this.#read.delete(digest)
      }
    }
  }

  /** Returns the key and its secret; the secret is not kept and cannot be shown again. */
  async create(principal: Principal, input: CreateApiKeyBody): Promise<{ apiKey: ApiKey; secret: string }> {
    requireAdmin(principal, 'manage API keys')
    if (input.role !== 'admin' && input.productId === undefined) {
      throw new InvalidInputError('#/productId', `A ${input.role} key needs the productId it is scoped to.`)
    }
    if (input.role === 'admin' && input.productId !== undefined) {
      throw new InvalidInputError('#/productId', 'An admin key sees every product; leave productId out.')
    }
    if (input.productId !== undefined && (await this.#products.findProduct(input.productId)) === undefined) {
      throw new DomainError('product_not_found', `No product ${input.productId} exists.`, {
        fieldErrors: [{ pointer: '#/productId', detail: 'No such product.' }],
      })
    }
    const secret = newApiKeySecret(secretPrefixes[input.role])
    const apiKey = this.#newApiKey(input.name, input.role, input.productId ?? null, secret)
    await this.#storage.write(principal, async ({ apiKeys, events }) => {
      await apiKeys.insert(apiKey)
      events.record('api_key.created', null, toApiKeyResource(apiKey)) // never the secret
    })
    return { apiKey, secret }
  }

  async get(principal: Principal, id: ApiKeyId): Promise<ApiKey> {
    requireAdmin(principal, 'manage API keys')
    const apiKey = await this.#apiKeys.findById(id)
    if (apiKey === undefined) {
      throw apiKeyNotFound(id)
    }
    return apiKey
  }

  /**
   * The key the request is made with, for any management key: how the dashboard learns its role,
   * its product and which key not to offer for deletion, without a request it would be refused.
   */
  async current(principal: Principal): Promise<ApiKey> {
    requireManagementKey(principal)
    if (principal.apiKeyId === undefined) {
      throw new DomainError(
        'forbidden',
        'A signed-in operator calls without an API key; GET /operator/me says who is signed in.',
      )
    }
    const apiKey = await this.#apiKeys.findById(principal.apiKeyId)
    if (apiKey === undefined) {
      throw apiKeyNotFound(principal.apiKeyId)
    }
    return apiKey
  }

  async delete(principal: Principal, id: ApiKeyId): Promise<void> {
    requireAdmin(principal, 'manage API keys')
    if (id === principal.apiKeyId) {
      throw new DomainError('forbidden', 'An API key cannot delete itself; use another admin key.')
    }
    await this.#storage.write(principal, async ({ apiKeys, events }) => {
      const apiKey = await apiKeys.findById(id)
      if (apiKey === undefined || !(await apiKeys.delete(id))) {
        throw apiKeyNotFound(id)
      }
      events.record('api_key.deleted', null, toApiKeyResource(apiKey))
    })
    this.forget(id)
  }

  async list(principal: Principal, query: ListApiKeysQuery): Promise<Paginated<ApiKey>> {
    requireAdmin(principal, 'manage API keys')
    const request = parseListQuery(query, apiKeyListSpec)
    const slice = await this.#apiKeys.list(request)
    return toPage(slice, request.limit, pageOf(request, slice.offset))
  }

  /**
   * Start-up: makes sure an admin can get in. With `configuredSecret` (KEYTURN_ADMIN_KEY) an admin key
   * with exactly that secret exists afterwards (idempotent); without it, the first start creates one
   * and returns its secret so the caller can print it once.
   */
  async bootstrapAdmin(configuredSecret: string | undefined): Promise<{ createdSecret: string | undefined }> {
    if (configuredSecret !== undefined) {
      await this.#apiKeys.insertUnless(
        this.#newApiKey('KEYTURN_ADMIN_KEY', 'admin', null, configuredSecret),
        'digest',
      )
      return { createdSecret: undefined }
    }
    if (await this.#apiKeys.hasAdminKey()) {
      return { createdSecret: undefined } // the common case, without a write transaction
    }
    // Several processes may make their first start at once: only the one that inserts prints a key.
    const secret = newApiKeySecret(secretPrefixes.admin)
    const inserted = await this.#apiKeys.insertUnless(
      this.#newApiKey('First admin key', 'admin', null, secret),
      'anyAdmin',
    )
    return { createdSecret: inserted ? secret : undefined }
  }

  #newApiKey(name: string, role: ApiKey['role'], productId: ApiKey['productId'], secret: string): ApiKey {
    return {
      id: newId('apiKey'),
      name,
      role,
      productId,
      digest: digestSecret(this.#digestKey, secret),
      prefix: displayPrefix(secret, role),
      createdAt: this.#clock.now(),
    }
  }
}

function apiKeyNotFound(id: ApiKeyId): DomainError {
  return new DomainError('api_key_not_found', `No API key ${id} exists.`)
}
