import { timingSafeEqual } from 'node:crypto'
import type { ActivateLicenseBody } from '@keyturn/protocol'
import {
  type ActivateOfflineBody,
  type ActivationId,
  activationRequestClockTolerance,
  type DeactivateOfflineBody,
  deactivationCodeClockTolerance,
  deactivationLockSeconds,
  type LicenseId,
  maxDeactivationCodeFailures,
  type ProductId,
} from '@keyturn/protocol'
import type { Activation } from '../activations/activation.js'
import type { ActivationResult } from '../activations/activation-service.js'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { canSeeProduct, type Principal, requireManagementKey } from '../core/principal.js'
import { type CustomerActor, isCustomerActor, type UnitOfWork } from '../core/unit-of-work.js'
import type { IssuedLicenseFile, Machine } from '../license-files/license-file-service.js'
import type { LicenseView } from '../licenses/license.js'
import {
  ActivationRequestError,
  deactivationCodeMac,
  deactivationSecret,
  type ParsedActivationRequest,
  parseActivationRequest,
  parseDeactivationCode,
  requestMadeWithKey,
} from './offline-formats.js'
import type { OfflineStore } from './offline-store.js'

/**
 * Who hands in a request file or a deactivation code: an API key (or a signed-in operator), or a
 * customer signed in to the portal, who reaches only their own licenses and machines.
 */
export type OfflineCaller = Principal | CustomerActor

/** What offline activation needs of the activations feature (ActivationService fits). */
export interface Activations {
  get(by: OfflineCaller, id: ActivationId): Promise<Activation>
  activateOffline(by: OfflineCaller, view: LicenseView, input: ActivateLicenseBody): Promise<ActivationResult>
  deactivate(principal: Principal, id: ActivationId): Promise<void>
}

/** What it needs of licenses, as the caller may see them (LicenseService fits). */
export interface Licenses {
  get(by: OfflineCaller, id: LicenseId): Promise<LicenseView>
  getUsable(by: OfflineCaller, id: LicenseId, refusal: string): Promise<LicenseView>
}

/** Machine files (LicenseFileService fits). */
export interface MachineFiles {
  issueForOfflineActivation(
    by: OfflineCaller,
    view: LicenseView,
    machine: Machine & { readonly secret: string },
    issued: Date,
  ): Promise<IssuedLicenseFile>
}

export interface OfflineActivationServiceDeps {
  /** Reads. */
  readonly offline: OfflineStore
  /** Writes, in the unit of work (on SQLite, its group commit). */
  readonly storage: UnitOfWork<{ readonly offline: OfflineStore }>
  readonly activations: Activations
  readonly licenses: Licenses
  readonly files: MachineFiles
  /** The server's key for deactivation secrets (SecretKeys.offlineDeactivation). */
  readonly secretKey: Buffer
  readonly clock: Clock
}

export interface OfflineActivation {
  readonly activation: Activation
  readonly file: IssuedLicenseFile
}

/**
 * Activation and deactivation of machines that never reach the server (docs/guides/offline.md,
 * "Air-gapped machines"): a request file in, a machine file out; a deactivation code in, the seat freed.
 */
export class OfflineActivationService {
  readonly #deps: OfflineActivationServiceDeps

  constructor(deps: OfflineActivationServiceDeps) {
    this.#deps = deps
  }

  /**
   * Answers a request file with a machine file, taking a seat of the license whose key made it. A
   * portal customer's request must name one of their own licenses: another customer's is refused
   * exactly like an unknown key. With `onlyLicense`, a request made with another license's key is
   * refused the same way (the portal's page of one license).
   */
  async activate(
    by: OfflineCaller,
    body: ActivateOfflineBody,
    onlyLicense?: LicenseId,
  ): Promise<OfflineActivation> {
    if (!isCustomerActor(by)) {
      requireManagementKey(by)
    }
    const request = readRequest(body.request)
    const { payload } = request
    const now = this.#deps.clock.now()
    if (Date.parse(payload.created) > now.getTime() + activationRequestClockTolerance * 1000) {
      throw invalidRequest(
        `The request was made in the future (${payload.created}): check the clock of the machine that made it.`,
      )
    }
    const found = await this.#licenseOf(by, request, onlyLicense)
    const view = await this.#deps.licenses.getUsable(by, found.license.id, 'it cannot be activated')
    if (view.license.heartbeatTtl !== null) {
      throw new DomainError(
        'license_floating',
        `License ${view.license.id} is floating (heartbeatTtl ${view.license.heartbeatTtl} s): a machine without a network cannot keep its seat, so it cannot be activated offline.`,
      )
    }
    const { offline } = this.#deps
    let record = await offline.findRequest(view.license.id, payload.nonce)
    let activation: Activation
    if (record === undefined) {
      const platform = payload.platform
      const result = await this.#deps.activations.activateOffline(by, view, {
        fingerprint: payload.fingerprint,
        ...(payload.name === undefined ? {} : { name: payload.name }),
        ...(platform === undefined ? {} : { metadata: { platform } }),
      })
      activation = result.activation
      const answered = { activationId: activation.id, issuedAt: view.state.determinedAt }
      record = await this.#deps.storage.write(by, (tx) =>
        tx.offline.recordRequest(view.license.id, payload.nonce, answered),
      )
    } else {
      activation = await this.#deps.activations.get(by, record.activationId).catch((error) => {
        throw error instanceof DomainError && error.code === 'activation_not_found'
          ? new DomainError(
              'activation_not_found',
              `This request made activation ${record?.activationId}, which has been deactivated since: make a new request on the machine.`,
            )
          : error
      })
    }
    const secret = deactivationSecret(this.#deps.secretKey, activation.id)
    const file = await this.#deps.files.issueForOfflineActivation(
      by,
      view,
      { activationId: activation.id, fingerprint: activation.fingerprint, secret },
      record.issuedAt,
    )
    return { activation, file }
  }

  /**
   * Frees the seat when `code` is one the machine made with its secret, dated from a day before its
   * activation to a day after now (clock error).
   * Wrong codes are counted; the fifth in a row locks the activation's offline deactivation.
   */
  async deactivate(principal: Principal, id: ActivationId, body: DeactivateOfflineBody): Promise<void> {
    requireManagementKey(principal)
    await this.deactivateWith(principal, id, body, () => this.#deps.activations.deactivate(principal, id))
  }

  /**
   * `deactivate` for any caller, where `free` frees the seat once the code proved right: the portal
   * frees it through its own deactivation, which counts the license's transfers. A customer reaches
   * only the machines of their own licenses (any other activation is not found).
   */
  async deactivateWith<T>(
    by: OfflineCaller,
    id: ActivationId,
    body: DeactivateOfflineBody,
    free: () => Promise<T>,
  ): Promise<T> {
    const activation = await this.#deps.activations.get(by, id)
    const { offline, clock } = this.#deps
    const now = clock.now()
    const lockedUntil = await offline.lockedUntil(id)
    if (lockedUntil !== null && lockedUntil > now) {
      throw locked(lockedUntil, now)
    }
    if (!this.#codeMatches(activation, body.code, now)) {
      const lockUntil = new Date(now.getTime() + deactivationLockSeconds * 1000)
      const failures = await this.#deps.storage.write(by, (tx) =>
        tx.offline.recordFailure(id, maxDeactivationCodeFailures, lockUntil),
      )
      const triesLeft = Math.max(0, maxDeactivationCodeFailures - failures)
      throw new DomainError(
        'deactivation_code_invalid',
        triesLeft === 0
          ? `That is not a deactivation code of activation ${id}. That was the ${maxDeactivationCodeFailures}th wrong code in a row: offline deactivation of this activation is locked for ${deactivationLockSeconds / 60} minutes.`
          : `That is not a deactivation code of activation ${id}; ${triesLeft} more wrong codes lock its offline deactivation.`,
        { extensions: { triesLeft } },
      )
    }
    // The lock row goes with the activation (on delete cascade).
    return free()
  }

  #codeMatches(activation: Activation, code: string, now: Date): boolean {
    const parsed = parseDeactivationCode(code)
    if (parsed === undefined) {
      return false
    }
    // The machine's clock may be off by a day either way; a code dated further from the activation
    // and now was not made by a machine whose clock works, and is refused like a wrong one.
    const madeAt = parsed.minute * 60_000
    const tolerance = deactivationCodeClockTolerance * 1000
    if (madeAt < activation.createdAt.getTime() - tolerance || madeAt > now.getTime() + tolerance) {
      return false
    }
    const secret = deactivationSecret(this.#deps.secretKey, activation.id)
    return timingSafeEqual(deactivationCodeMac(secret, activation.id, parsed.minute), parsed.mac)
  }

  /** The license the request names (by key hint) whose key made its HMAC. */
  async #licenseOf(
    by: OfflineCaller,
    request: ParsedActivationRequest,
    onlyLicense: LicenseId | undefined,
  ): Promise<LicenseView> {
    const productId = request.payload.productId as ProductId
    const notFound = new DomainError(
      'license_not_found',
      `No license of product ${productId} has the key this request was made with.`,
    )
    if (!isCustomerActor(by) && !canSeeProduct(by, productId)) {
      throw notFound
    }
    const ids = await this.#deps.offline.licensesByKeyHint(productId, request.payload.keyHint)
    let visible = 0
    for (const id of ids) {
      if (onlyLicense !== undefined && id !== onlyLicense) {
        continue
      }
      // For a customer, the licenses of others are skipped as if they did not exist.
      const view = await this.#deps.licenses.get(by, id).catch((error: unknown) => {
        if (error instanceof DomainError && error.code === 'license_not_found') {
          return undefined
        }
        throw error
      })
      if (view === undefined) {
        continue
      }
      visible += 1
      if (requestMadeWithKey(request, view.license.key)) {
        return view
      }
    }
    if (visible === 0) {
      throw notFound
    }
    throw invalidRequest(
      'The request was altered: its HMAC does not match the key of the license it names. Make a new request on the machine and send the file unchanged.',
    )
  }
}

function readRequest(text: string): ParsedActivationRequest {
  try {
    return parseActivationRequest(text)
  } catch (error) {
    if (error instanceof ActivationRequestError) {
      throw invalidRequest(error.message)
    }
    throw error
  }
}

function invalidRequest(detail: string): DomainError {
  return new DomainError('activation_request_invalid', detail, {
    fieldErrors: [{ pointer: '#/request', detail }],
  })
}

function locked(until: Date, now: Date): DomainError {
  const retryAfter = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000))
  return new DomainError(
    'deactivation_locked',
    `Too many wrong deactivation codes: offline deactivation of this activation is locked until ${until.toISOString()}.`,
    { extensions: { retryAfter } },
  )
}
