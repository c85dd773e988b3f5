import { createHmac } from 'node:crypto'
import {
  type ActivationId,
  type CreateLicenseFileBody,
  type CreateLicenseFileByKeyBody,
  defaultClientTokenTtlSeconds,
  defaultLicenseFileTtlSeconds,
  type LicenseFilePayload,
  type LicenseId,
  type PolicyId,
  type ProductId,
} from '@keyturn/protocol'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { canSeeProduct, type Principal, requireManagementKey } from '../core/principal.js'
import type { ProductLookup } from '../core/product-lookup.js'
import type { CustomerActor, UnitOfWork } from '../core/unit-of-work.js'
import type { LicenseView } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import type { UsableLicenses } from '../licenses/usable-licenses.js'
import { checkInAt } from '../policies/check-in.js'
import type { Ed25519Sign } from '../tokens/ed25519.js'
import { writeLicenseFile } from './license-file-format.js'

/** What license files need of activations (the activation store fits). */
export interface ActivationLookup {
  findById(
    id: ActivationId,
    at: Date,
  ): Promise<
    { readonly id: ActivationId; readonly licenseId: LicenseId; readonly fingerprint: string } | undefined
  >
  findByFingerprint(
    licenseId: LicenseId,
    fingerprint: string,
    at: Date,
  ): Promise<{ readonly id: ActivationId; readonly fingerprint: string } | undefined>
}

/** What files take from the license's policy, read live (the policies service fits). */
export interface PolicyNames {
  findPolicy(id: PolicyId): Promise<
    | {
        readonly name: string
        readonly licenseFileTtl: number | null
        readonly licenseFileMetadata: boolean
        readonly checkInInterval: number | null
        readonly gracePeriod: number | null
      }
    | undefined
  >
}

/** The product's current signing key (the token service fits). */
export interface ProductSigners {
  productSigner(productId: ProductId): Promise<{ readonly keyId: string; readonly sign: Ed25519Sign }>
}

export interface LicenseFileServiceDeps {
  readonly licenses: UsableLicenses
  readonly activations: ActivationLookup
  readonly policies: PolicyNames
  readonly products: ProductLookup
  readonly signers: ProductSigners
  /** Records `license.file_issued` (never the file): no change goes with it. */
  readonly storage: UnitOfWork<object>
  readonly clock: Clock
}

export interface IssuedLicenseFile {
  readonly licenseFile: string
  readonly expiresAt: Date | null
  readonly view: LicenseView
}

export interface Machine {
  readonly activationId: ActivationId
  readonly fingerprint: string
  /** Offline activation only: keys the machine's deactivation codes. */
  readonly secret?: string
}

/** Salt, then iv, taken in turn from HMAC-SHA256(secret, content): fresh whenever the content differs. */
function derivedRandom(secret: string, content: string): (size: number) => Buffer {
  const stream = createHmac('sha256', Buffer.from(secret, 'base64url'))
    .update(`keyturn-license-file/1 random\n${content}`, 'utf8')
    .digest()
  let used = 0
  return (size) => {
    if (used + size > stream.length) {
      throw new Error('derivedRandom: more bytes than a license file takes')
    }
    used += size
    return stream.subarray(used - size, used)
  }
}

const noFile = 'a license file is issued only for an active license.'

/** Signed license files (docs/guides/offline.md) for licenses and activated machines. */
export class LicenseFileService {
  readonly #deps: LicenseFileServiceDeps

  constructor(deps: LicenseFileServiceDeps) {
    this.#deps = deps
  }

  async issue(
    principal: Principal,
    licenseId: LicenseId,
    input: CreateLicenseFileBody,
  ): Promise<IssuedLicenseFile> {
    requireManagementKey(principal)
    const view = await this.#deps.licenses.getUsable(principal, licenseId, noFile)
    return this.#issue(principal, view, undefined, input.ttl, undefined, input.encrypt ?? false)
  }

  async issueForActivation(
    principal: Principal,
    activationId: ActivationId,
    input: CreateLicenseFileBody,
  ): Promise<IssuedLicenseFile> {
    requireManagementKey(principal)
    const activation = await this.#deps.activations.findById(activationId, this.#deps.clock.now())
    const notFound = new DomainError('activation_not_found', `No activation ${activationId}.`)
    if (activation === undefined) {
      throw notFound
    }
    const view = await this.#deps.licenses
      .getUsable(principal, activation.licenseId, noFile)
      .catch((error) => {
        // Another product's activation is invisible to a product key, as its license is.
        throw error instanceof DomainError && error.code === 'license_not_found' ? notFound : error
      })
    if (!canSeeProduct(principal, view.license.productId)) {
      throw notFound
    }
    const machine = { activationId: activation.id, fingerprint: activation.fingerprint }
    return this.#issue(principal, view, machine, input.ttl, undefined, input.encrypt ?? false)
  }

  /**
   * For applications: a file for the license whose key they present, for an activated machine when
   * `fingerprint` is given. With a client key it lives at most the product's `clientTokenTtl`.
   */
  async issueByKey(principal: Principal, input: CreateLicenseFileByKeyBody): Promise<IssuedLicenseFile> {
    const { key, productId, fingerprint, encrypt = false } = input
    const view = await this.#deps.licenses.getUsableByKey(principal, key, productId, noFile)
    let machine: Machine | undefined
    if (fingerprint !== undefined) {
      const activation = await this.#deps.activations.findByFingerprint(
        view.license.id,
        fingerprint,
        view.state.determinedAt,
      )
      if (activation === undefined) {
        throw new DomainError(
          'activation_not_found',
          'A license file can be bound only to an activated machine.',
          {
            fieldErrors: [
              { pointer: '#/fingerprint', detail: 'This machine is not activated for this license.' },
            ],
          },
        )
      }
      machine = { activationId: activation.id, fingerprint: activation.fingerprint }
    }
    let cap: number | undefined
    if (principal.role === 'client') {
      const product = await this.#deps.products.findProduct(view.license.productId)
      cap = product?.clientTokenTtl ?? defaultClientTokenTtlSeconds
    }
    return this.#issue(principal, view, machine, input.ttl, cap, encrypt)
  }

  /**
   * For the customer portal: a file bound to, and encrypted for, one activated machine of a license
   * the portal found to be the signed-in customer's (the caller checks that; the license must be
   * active). Recorded as `license.file_issued` with the customer as actor.
   */
  async issueForCustomerMachine(
    by: CustomerActor,
    view: LicenseView,
    machine: Machine,
  ): Promise<IssuedLicenseFile | 'license_not_active'> {
    if (view.state.status !== 'active') {
      return 'license_not_active'
    }
    return this.#issue(by, view, machine, undefined, undefined, true)
  }

  /**
   * For offline activation (offline/): a machine file carrying the machine's deactivation secret,
   * always encrypted, issued at `issued` (when its request was first answered). Its salt and iv
   * come from an HMAC of its content under the secret, so the same request answered again, for an
   * unchanged license, gets the same file byte for byte, and a changed one never reuses an iv.
   */
  async issueForOfflineActivation(
    principal: Principal | CustomerActor,
    view: LicenseView,
    machine: Machine & { readonly secret: string },
    issued: Date,
  ): Promise<IssuedLicenseFile> {
    return this.#issue(principal, view, machine, undefined, undefined, true, issued)
  }

  async #issue(
    by: Principal | CustomerActor,
    view: LicenseView,
    machine: Machine | undefined,
    requested: number | null | undefined,
    cap: number | undefined,
    encrypt: boolean,
    issuedAt?: Date,
  ): Promise<IssuedLicenseFile> {
    const { license, state } = view
    const issued = issuedAt ?? state.determinedAt
    const policy =
      license.policyId === null ? undefined : await this.#deps.policies.findPolicy(license.policyId)
    // The request's lifetime, else the policy's (read live), else a year; a client key's at most `cap`.
    // Not `??`: a policy's null asks for files that never expire.
    const wanted =
      requested !== undefined
        ? requested
        : policy !== undefined
          ? policy.licenseFileTtl
          : defaultLicenseFileTtlSeconds
    const ttl = cap === undefined ? wanted : Math.min(wanted ?? cap, cap)
    const lifetimeEnd = ttl === null ? Number.POSITIVE_INFINITY : issued.getTime() + ttl * 1000
    const licenseEnd = license.expirationDate?.getTime() ?? Number.POSITIVE_INFINITY
    const end = Math.min(lifetimeEnd, licenseEnd)
    const expiry = Number.isFinite(end) ? new Date(end) : null
    const payload: LicenseFilePayload = {
      license: {
        id: license.id,
        status: state.status,
        expirationDate: license.expirationDate?.toISOString() ?? null,
        policy: policy?.name ?? null,
        entitlements: [...license.entitlements],
        maxActivations: license.maxActivations,
        maxUses: license.maxUses,
        uses: license.uses,
        // Only where the policy opts in: metadata may hold what a vendor keeps off customers' disks.
        ...(policy?.licenseFileMetadata === true ? { metadata: license.metadata } : {}),
      },
      ...(machine === undefined ? {} : { machine }),
      ...checkInAt(policy, issued),
    }
    const signer = await this.#deps.signers.productSigner(license.productId)
    const secret = machine?.secret
    const random =
      secret === undefined
        ? undefined
        : derivedRandom(
            secret,
            `${signer.keyId}\n${issued.toISOString()}\n${expiry?.toISOString()}\n${JSON.stringify(payload)}`,
          )
    const licenseFile = await writeLicenseFile(
      {
        keyId: signer.keyId,
        productId: license.productId,
        issued,
        expiry,
        payload,
        licenseKey: license.key,
        ...(encrypt ? { encrypt: machine === undefined ? {} : { fingerprint: machine.fingerprint } } : {}),
        ...(random === undefined ? {} : { random }),
      },
      signer.sign,
    )
    await this.#deps.storage.recordAlone(
      by,
      'license.file_issued',
      license.productId,
      toLicenseResource(view),
    )
    return { licenseFile, expiresAt: expiry, view }
  }
}
