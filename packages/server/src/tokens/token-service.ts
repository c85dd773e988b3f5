import {
  type CreateLicenseTokenBody,
  type CreateLicenseTokenByKeyBody,
  defaultClientTokenTtlSeconds,
  defaultPageLimit,
  defaultTokenTtlSeconds,
  type LicenseId,
  type LicenseTokenClaims,
  type LicenseTokenPayload,
  type ListProductKeysQuery,
  licenseTokenIssuer,
  licenseTokenType,
  maxCustomPayloadBytes,
  maxTokenTtlSeconds,
  type Paginated,
  type PolicyId,
  type ProductId,
} from '@keyturn/protocol'
import type { ActivationCheck } from '../core/activation-check.js'
import type { Clock } from '../core/clock.js'
import { DomainError, InvalidInputError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { toPage } from '../core/list-query.js'
import { canSeeProduct, type Principal, requireAdmin, requireManagementKey } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import type { UnitOfWork } from '../core/unit-of-work.js'
import type { LicenseView } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import type { UsableLicenses } from '../licenses/usable-licenses.js'
import { type CheckInLookup, checkInOf } from '../policies/check-in.js'
import { type Ed25519Sign, ed25519Signer, type SigningPlace, signJwt } from './ed25519.js'
import { toProductKeyResource } from './product-key-resource.js'
import type { SigningKeyStore, StoredPublicKey } from './signing-key-store.js'
import { decryptSigningKey, newSigningKey, type SigningKeyRecord } from './signing-keys.js'

/** Decrypted signing keys kept per process (one per product, more after rotations). */
const maxCachedSigningKeys = 1024
/**
 * How long a process keeps a product's answer signer (its current key and `signResponses`) before
 * reading them again: a change made through another process applies within this time; one made
 * through this process (rotation, product update) applies at once.
 */
export const answerSignerTtlMs = 2000

/** Signs the RFC 9421 signature base of an application-facing answer with a product's current key. */
export interface AnswerSigner {
  readonly keyId: string
  /** The product wants every application-facing answer signed, asked for or not. */
  readonly signResponses: boolean
  /** The Ed25519 signature (64 bytes) of `data`, made where `TokenServiceDeps.answerSigning` says. */
  readonly sign: Ed25519Sign
}

/** Values per product, each kept for `answerSignerTtlMs` from its read (ms, the service's clock). */
class KeptPerProduct<T> {
  readonly #entries = new Map<ProductId, { readonly value: T; readonly since: number }>()

  /** The value read less than `answerSignerTtlMs` before `now`; a clock set back since does not extend that. */
  fresh(productId: ProductId, now: number): { readonly value: T } | undefined {
    const kept = this.#entries.get(productId)
    return kept !== undefined && kept.since <= now && now < kept.since + answerSignerTtlMs ? kept : undefined
  }

  keep(productId: ProductId, value: T, since: number): void {
    if (this.#entries.size >= maxCachedSigningKeys) {
      this.#entries.clear()
    }
    this.#entries.set(productId, { value, since })
  }

  forget(productId: ProductId): void {
    this.#entries.delete(productId)
  }
}

/** What tokens need of licenses: a license the caller may see and use now (LicenseService fits). */
export type LicenseReader = UsableLicenses

export interface IssuedToken {
  readonly token: string
  readonly payload: LicenseTokenPayload
  readonly view: LicenseView
}

/**
 * The longest token a policy allows, read only for a ttl past a year, and its check-in fields (the
 * policies service fits).
 */
export interface TokenPolicies extends CheckInLookup {
  findPolicy(id: PolicyId): Promise<{ readonly tokenTtlMax: number | null } | undefined>
}

export interface TokenServiceDeps {
  readonly licenses: LicenseReader
  readonly policies: TokenPolicies
  readonly products: ProductLookup
  readonly activations: ActivationCheck
  readonly signingKeys: SigningKeyStore
  /** Writes: the change (or the issue of a token) and its event in one transaction. */
  readonly storage: UnitOfWork<{ readonly signingKeys: SigningKeyStore }>
  readonly clock: Clock
  readonly signingKeyEncryption: Buffer
  /** Where answers and tokens are signed: on the thread pool when a core is left over, else on the event loop. */
  readonly answerSigning: SigningPlace
}

export class TokenService {
  readonly #licenses: LicenseReader
  readonly #policies: TokenPolicies
  readonly #products: ProductLookup
  readonly #activations: ActivationCheck
  readonly #signingKeys: SigningKeyStore
  readonly #storage: UnitOfWork<{ readonly signingKeys: SigningKeyStore }>
  readonly #clock: Clock
  readonly #signingKeyEncryption: Buffer
  readonly #answerSigning: SigningPlace
  /** Each decrypted private key as the signer of its product's tokens and answers, by `kid`. */
  readonly #signers = new Map<string, Ed25519Sign>()
  readonly #answerSigners = new KeptPerProduct<AnswerSigner | undefined>()
  readonly #currentKeys = new KeptPerProduct<SigningKeyRecord | undefined>()

  constructor(deps: TokenServiceDeps) {
    this.#licenses = deps.licenses
    this.#policies = deps.policies
    this.#products = deps.products
    this.#activations = deps.activations
    this.#signingKeys = deps.signingKeys
    this.#storage = deps.storage
    this.#clock = deps.clock
    this.#signingKeyEncryption = deps.signingKeyEncryption
    this.#answerSigning = deps.answerSigning
  }

  /** Signs a license token with the product's current key; only an active license of an active product gets one. */
  async issue(
    principal: Principal,
    licenseId: LicenseId,
    input: CreateLicenseTokenBody,
  ): Promise<IssuedToken> {
    return this.#issue(principal, await this.#licenses.getUsable(principal, licenseId, noToken), input)
  }

  /**
   * For applications: a token for the license whose key they present (what a `client` key may do).
   * A client key can be extracted from any copy of the application, so with one the token carries
   * no `customPayload` (it would sign whatever entitlements the caller names) and lives at most the
   * product's `clientTokenTtl`.
   */
  async issueByKey(principal: Principal, input: CreateLicenseTokenByKeyBody): Promise<IssuedToken> {
    const { key, productId, ...options } = input
    // First the read that confirms the API key (config.confirmsApiKey): a deleted key hears 401.
    const view = await this.#licenses.getUsableByKey(principal, key, productId, noToken)
    if (principal.role === 'client' && options.customPayload !== undefined) {
      const detail =
        'A client API key may not set customPayload: anyone can extract a client key from a shipped application, so only a management key (your back end) may put claims in a token.'
      throw new DomainError('forbidden', detail, {
        fieldErrors: [{ pointer: '#/customPayload', detail: 'not allowed with a client API key' }],
      })
    }
    if (principal.role !== 'client') {
      return this.#issue(principal, view, options)
    }
    const product = await this.#products.findProduct(view.license.productId)
    const cap = product?.clientTokenTtl ?? defaultClientTokenTtlSeconds
    return this.#issue(principal, view, {
      ...options,
      ttl: Math.min(options.ttl ?? defaultTokenTtlSeconds, cap),
    })
  }

  /** Signs a token for `view`'s license, which the caller found usable. */
  async #issue(principal: Principal, view: LicenseView, input: CreateLicenseTokenBody): Promise<IssuedToken> {
    const { license, state } = view
    const customFields = input.customPayload
    if (
      customFields !== undefined &&
      new TextEncoder().encode(JSON.stringify(customFields)).length > maxCustomPayloadBytes
    ) {
      throw new InvalidInputError(
        '#/customPayload',
        `customPayload must be at most ${maxCustomPayloadBytes} bytes as JSON.`,
      )
    }
    if (input.ttl !== undefined && input.ttl > maxTokenTtlSeconds) {
      // Past a year only where the license's policy allows it (read live, and only then).
      const policy = license.policyId === null ? undefined : await this.#policies.findPolicy(license.policyId)
      const allowed = policy?.tokenTtlMax ?? maxTokenTtlSeconds
      if (input.ttl > allowed) {
        throw new InvalidInputError(
          '#/ttl',
          `ttl may be at most ${allowed} seconds for this license (its policy's tokenTtlMax, else a year).`,
        )
      }
    }
    const seat =
      input.fingerprint === undefined
        ? undefined
        : await this.#activations.findAlive(license.id, input.fingerprint, state.determinedAt)
    if (input.fingerprint !== undefined && seat === undefined) {
      throw new DomainError(
        'activation_not_found',
        'A token can be bound only to a machine activated for this license.',
        {
          fieldErrors: [
            { pointer: '#/fingerprint', detail: 'This machine is not activated for this license.' },
          ],
        },
      )
    }
    const key = await this.#currentKey(license.productId)
    if (key === undefined) {
      throw new Error(`Product ${license.productId} has no current signing key`) // created with the product
    }

    const now = state.determinedAt
    const issuedAt = Math.floor(now.getTime() / 1000)
    const lifetimeEnd = issuedAt + (input.ttl ?? defaultTokenTtlSeconds)
    const licenseEnd =
      license.expirationDate === null
        ? Number.POSITIVE_INFINITY
        : Math.floor(license.expirationDate.getTime() / 1000)
    // A floating seat's token ends one TTL after its lease: offline, a machine keeps the seat's
    // token at most that long, not the token lifetime (docs/decisions/0015-floating-seats-and-usage.md).
    const seatEnd =
      seat === undefined || seat.expiresAt === null || license.heartbeatTtl === null
        ? Number.POSITIVE_INFINITY
        : Math.floor(seat.expiresAt.getTime() / 1000) + license.heartbeatTtl
    const expiresAt = Math.min(lifetimeEnd, licenseEnd, seatEnd)
    const payload: LicenseTokenPayload = {
      licenseId: license.id,
      expirationDate: new Date(expiresAt * 1000).toISOString(),
      productId: license.productId,
      createdAt: now.toISOString(),
      ...(customFields === undefined ? {} : { customFields }),
      ...(input.fingerprint === undefined ? {} : { fingerprint: input.fingerprint }),
      entitlements: [...license.entitlements],
      ...(await checkInOf(this.#policies, license.policyId, now)),
    }
    const claims: Omit<LicenseTokenClaims, 'iat' | 'exp' | 'nbf' | 'iss' | 'sub' | 'aud' | 'jti'> = payload
    // customPayload travels inside `customFields`, so it can never override a registered claim.
    // The registered claims after the license's, in the order jose's SignJWT setters add them (signJwt).
    const token = await signJwt(
      { alg: 'EdDSA', typ: licenseTokenType, kid: key.keyId },
      {
        ...claims,
        iss: licenseTokenIssuer,
        sub: license.id,
        aud: license.productId,
        iat: issuedAt,
        nbf: issuedAt,
        exp: expiresAt,
        jti: newId('token'),
      },
      this.#signer(key),
    )
    // Never the token. No change goes with it: concurrent issues share one commit.
    await this.#storage.recordAlone(
      principal,
      'license.token_issued',
      license.productId,
      toLicenseResource(view),
    )
    return { token, payload, view }
  }

  /** The product's current signing key, to sign other artefacts (license files) as tokens are signed. */
  async productSigner(productId: ProductId): Promise<{ readonly keyId: string; readonly sign: Ed25519Sign }> {
    const key = await this.#currentKey(productId)
    if (key === undefined) {
      throw new Error(`Product ${productId} has no current signing key`) // created with the product
    }
    return { keyId: key.keyId, sign: this.#signer(key) }
  }

  /** The product's public keys, current first; product keys may read their own product's. */
  async listKeys(
    principal: Principal,
    productId: ProductId,
    query: ListProductKeysQuery,
  ): Promise<Paginated<StoredPublicKey>> {
    requireManagementKey(principal)
    await this.#visibleProduct(principal, productId)
    const { page = 0, limit = defaultPageLimit } = query
    // A product has a handful of keys: page through them in memory.
    const keys = await this.#signingKeys.list(productId)
    const offset = page * limit
    return toPage({ items: keys.slice(offset, offset + limit), totalCount: keys.length, offset }, limit, page)
  }

  /** Makes a new signing key current; earlier keys stay listed so their tokens keep verifying. */
  async rotate(principal: Principal, productId: ProductId): Promise<StoredPublicKey> {
    await this.#visibleProduct(principal, productId)
    requireAdmin(principal, 'rotate signing keys')
    const now = this.#clock.now()
    const next = newSigningKey(this.#signingKeyEncryption)
    const rotated: StoredPublicKey = {
      keyId: next.keyId,
      productId,
      publicKeyPem: next.publicKeyPem,
      createdAt: now,
      retiredAt: null,
    }
    await this.#storage.write(principal, async ({ signingKeys, events }) => {
      await signingKeys.rotate(productId, next, now)
      events.record('product.key_rotated', productId, toProductKeyResource(rotated))
    })
    this.#currentKeys.forget(productId)
    this.forgetAnswerSigner(productId)
    return rotated
  }

  /**
   * Fast path: the key that signs a product's tokens, kept like the answer signer for
   * `answerSignerTtlMs`. Every token read it in a statement of its own (a round trip on
   * PostgreSQL). A rotation through this process applies at once; through another one, within that
   * time, and meanwhile tokens are signed by the key it retired, which stays listed
   * (`GET /products/{id}/keys`), so they verify all the same.
   */
  async #currentKey(productId: ProductId): Promise<SigningKeyRecord | undefined> {
    const now = this.#clock.now().getTime()
    const kept = this.#currentKeys.fresh(productId, now)
    if (kept !== undefined) {
      return kept.value
    }
    const key = await this.#signingKeys.current(productId)
    this.#currentKeys.keep(productId, key, now)
    return key
  }

  /**
   * The signer of a product's application-facing answers (protection/), or undefined when there is
   * no such product. Kept for `answerSignerTtlMs`: this runs on every application-facing request.
   */
  async answerSigner(productId: ProductId): Promise<AnswerSigner | undefined> {
    const now = this.#clock.now().getTime()
    const kept = this.#answerSigners.fresh(productId, now)
    if (kept !== undefined) {
      return kept.value
    }
    const [product, key] = await Promise.all([
      this.#products.findProduct(productId),
      this.#signingKeys.current(productId),
    ])
    let signer: AnswerSigner | undefined
    if (product !== undefined && key !== undefined) {
      signer = {
        keyId: key.keyId,
        signResponses: product.signResponses,
        sign: this.#signer(key),
      }
    }
    this.#answerSigners.keep(productId, signer, now)
    return signer
  }

  /** The product changed (in this process): its next answer reads the signer again. */
  forgetAnswerSigner(productId: ProductId): void {
    this.#answerSigners.forget(productId)
  }

  /**
   * Decrypting and importing a key costs more than signing with it: keep the decrypted keys by
   * `kid`. A kid names one immutable key pair, so no process can hold a stale one.
   */
  #signer(key: SigningKeyRecord): Ed25519Sign {
    let signer = this.#signers.get(key.keyId)
    if (signer === undefined) {
      if (this.#signers.size >= maxCachedSigningKeys) {
        this.#signers.clear()
      }
      signer = ed25519Signer(decryptSigningKey(this.#signingKeyEncryption, key), this.#answerSigning)
      this.#signers.set(key.keyId, signer)
    }
    return signer
  }

  async #visibleProduct(principal: Principal, productId: ProductId): Promise<void> {
    if (!canSeeProduct(principal, productId) || (await this.#products.findProduct(productId)) === undefined) {
      throw new DomainError('product_not_found', `No product ${productId} is visible to this API key.`)
    }
  }
}

/** How a refusal to issue a token ends (LicenseReader.getUsable). */
const noToken = 'no token is issued for it'
