import { randomInt } from 'node:crypto'
import {
  type ActivateOfflineBody,
  type ActivationId,
  type CustomerId,
  type DeactivateOfflineBody,
  type ErrorCode,
  errorCatalogue,
  type LicenseId,
  type ProductId,
} from '@keyturn/protocol'
import type { Activation } from '../activations/activation.js'
import { toActivationResource } from '../activations/activation-resource.js'
import type { ActivationStore } from '../activations/activation-store.js'
import { type ActivityCounts, countNothing } from '../core/activity-counts.js'
import type { BackgroundJob } from '../core/background-loop.js'
import type { Clock } from '../core/clock.js'
import { DomainError } from '../core/errors.js'
import { newId } from '../core/ids.js'
import { type Principal, requireAdmin } from '../core/principal.js'
import { digestSecret, digestsEqual } from '../core/secrets.js'
import { type CustomerActor, type SystemActor, systemActor, type UnitOfWork } from '../core/unit-of-work.js'
import type { License, LicenseView } from '../licenses/license.js'
import type { LicenseRef } from '../licenses/license-store.js'
import type { MailTemplates, MailVariables } from '../mail/mail-templates.js'
import type { Session } from '../sessions/session.js'
import type { SessionService, StartedSession } from '../sessions/session-service.js'
import { SignInLimits } from '../sessions/sign-in-limits.js'
import type { OwnedLicense, PortalMachine, PortalStore } from './portal-store.js'

/** Sign-in steps taken before anyone is signed in are the portal's own. */
const portalSystem = systemActor('portal')
/** A sign-in code lasts 10 minutes and allows 5 tries. */
export const codeLifetimeMs = 10 * 60_000
export const codeTries = 5
/** The portal shows at most this many licenses of a customer (newest first). */
export const maxLicensesShown = 100
/** Codes asked per address within `requestWindowMs`, counted in the database so every process shares the limit. */
const codesPerAddress = 5
const requestWindowMs = 15 * 60_000

/** The portal's housekeeping, every 10 minutes in every serving process. */
export function portalPurgeJob(portal: PortalService): BackgroundJob {
  return {
    name: 'portal purge',
    idleMs: 10 * 60_000,
    async tick() {
      await portal.purge()
      return false
    },
  }
}

/** Where a request came from, for limits and events. */
export interface Caller {
  readonly ip: string
  readonly requestId: string
}

/** What the portal needs of licenses: the stored license and its view at an instant (LicenseService and its store). */
export interface PortalLicenses {
  find(which: LicenseRef): Promise<License | undefined>
  viewOf(license: License, now: Date): Promise<LicenseView>
}

/** What the portal needs to issue license files (LicenseFileService fits). */
export interface PortalLicenseFiles {
  issueForCustomerMachine(
    by: CustomerActor,
    view: LicenseView,
    machine: { readonly activationId: ActivationId; readonly fingerprint: string },
  ): Promise<{ readonly licenseFile: string } | 'license_not_active'>
}

/** Offline activation and deactivation for a customer (OfflineActivationService fits). */
export interface PortalOffline {
  activate(
    by: CustomerActor,
    body: ActivateOfflineBody,
    onlyLicense: LicenseId,
  ): Promise<{ readonly activation: Activation; readonly file: { readonly licenseFile: string } }>
  deactivateWith<T>(
    by: CustomerActor,
    id: ActivationId,
    body: DeactivateOfflineBody,
    free: () => Promise<T>,
  ): Promise<T>
}

/** Why the offline service refused (its error code and detail): the page says it in the customer's words. */
export interface OfflineRefusal {
  readonly kind: 'refused'
  readonly code: ErrorCode
  readonly status: number
  readonly detail: string
  /** Seconds until a lock ends (`deactivation_locked`). */
  readonly retryAfter?: number
  /** Wrong codes left before the lock (`deactivation_code_invalid`). */
  readonly triesLeft?: number
}

export type OfflineActivationOutcome =
  | {
      readonly kind: 'issued'
      readonly licenseFile: string
      readonly fileName: string
      readonly machineName: string
    }
  | OfflineRefusal

export type OfflineDeactivationOutcome = DeactivateOutcome | OfflineRefusal

export type LicenseFileOutcome =
  | { readonly kind: 'issued'; readonly licenseFile: string; readonly fileName: string }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'license_not_active' }

export type SignInOutcome =
  | { readonly kind: 'signed_in'; readonly started: StartedSession }
  | { readonly kind: 'refused'; readonly reason: 'wrong_code' | 'no_code' | 'too_many_tries' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }

export interface PortalLicense {
  readonly view: LicenseView
  readonly owned: OwnedLicense
  readonly machines: readonly PortalMachine[]
  /** Deactivations left in the current window; null: unlimited. */
  readonly transfersLeft: number | null
}

export interface PortalOverview {
  readonly customer: { readonly id: CustomerId; readonly email: string }
  readonly licenses: readonly PortalLicense[]
}

export type DeactivateOutcome =
  | { readonly kind: 'deactivated'; readonly machine: PortalMachine }
  | { readonly kind: 'not_found' }
  /** The machine was activated offline: only its deactivation code frees it (`deactivateOffline`). */
  | { readonly kind: 'code_required'; readonly machine: PortalMachine }
  | {
      readonly kind: 'transfer_limit_reached'
      readonly maxTransfers: number
      readonly transferPeriod: number
    }

type PortalStores = { readonly portal: PortalStore; readonly activations: ActivationStore }

export interface PortalServiceDeps {
  readonly portal: PortalStore
  readonly storage: UnitOfWork<PortalStores>
  readonly licenses: PortalLicenses
  readonly sessions: SessionService
  /** undefined while mail is off: no code can be sent. */
  readonly templates: MailTemplates | undefined
  readonly clock: Clock
  readonly digestKey: Buffer
  readonly licenseFiles: PortalLicenseFiles
  readonly offline: PortalOffline
  /** The portal's address for mails (a product's `branding.portalUrl` wins); undefined: none given. */
  readonly portalUrl?: string | undefined
  /** Daily statistics: machines deactivated; default none. */
  readonly counts?: ActivityCounts
}

/**
 * The customer portal: sign-in by a mailed one-time code, then the customer's own licenses and
 * machines. Every read is scoped to the signed-in customer in the store's query (an id of another
 * customer's license or machine is simply not found).
 */
export class PortalService {
  readonly #portal: PortalStore
  readonly #storage: UnitOfWork<PortalStores>
  readonly #licenses: PortalLicenses
  readonly #templates: MailTemplates | undefined
  readonly #clock: Clock
  readonly #key: Buffer
  readonly #portalUrl: string | null
  readonly #licenseFiles: PortalLicenseFiles
  readonly #offline: PortalOffline
  readonly #counts: ActivityCounts
  readonly sessions: SessionService
  /** Code requests per IP address: 30 within 15 minutes (per address: counted in the database). */
  readonly #requestLimits: SignInLimits
  /** Wrong codes: 5 per address and 50 per IP address within 15 minutes, then a 15-minute lockout. */
  readonly #tryLimits: SignInLimits

  constructor(deps: PortalServiceDeps) {
    this.#portal = deps.portal
    this.#storage = deps.storage
    this.#licenses = deps.licenses
    this.#templates = deps.templates
    this.#clock = deps.clock
    this.#key = deps.digestKey
    this.#portalUrl = deps.portalUrl ?? null
    this.#licenseFiles = deps.licenseFiles
    this.#offline = deps.offline
    this.#counts = deps.counts ?? countNothing
    this.sessions = deps.sessions
    this.#requestLimits = new SignInLimits(deps.clock, {
      accountFailures: Number.POSITIVE_INFINITY,
      ipFailures: 30,
    })
    this.#tryLimits = new SignInLimits(deps.clock, { accountFailures: codeTries, ipFailures: 50 })
  }

  /** Whether codes can be mailed (mail is configured). */
  get canSendCodes(): boolean {
    return this.#templates !== undefined
  }

  /** The product's branding for the pages; undefined when it does not exist. */
  branding(productId: ProductId): Promise<MailVariables | undefined> {
    return this.#portal.brandingOf(productId)
  }

  /**
   * Mails a sign-in code if `email` is a customer's. The answer and the work are the same either
   * way (a code row is stored and an event recorded for any address; only the mail differs), so
   * neither the answer nor its timing tells whether the address is a customer's.
   */
  async requestCode(
    email: string,
    caller: Caller,
    options: { readonly productId?: ProductId | undefined } = {},
  ): Promise<{ readonly kind: 'sent' } | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }> {
    const address = email.trim()
    const now = this.#clock.now()
    const window = new Date(now.getTime() - requestWindowMs)
    const recent = await this.#portal.countCodesSince(this.#emailDigest(address), window)
    const gate =
      recent >= codesPerAddress
        ? { allowed: false as const, retryAfterMs: requestWindowMs }
        : this.#requestLimits.check(address, caller.ip)
    if (!gate.allowed) {
      await this.#storage.write(portalSystem, async ({ events }) => {
        events.record('portal.sign_in_failed', null, {
          customerId: null,
          reason: 'rate_limited',
          ip: caller.ip,
        })
      })
      return { kind: 'rate_limited', retryAfterMs: gate.retryAfterMs }
    }
    this.#requestLimits.recordFailure(address, caller.ip)
    const customer = await this.#portal.findCustomerByEmail(address)
    // Mailed to the address as the customer record has it, whatever case was typed.
    await this.#issueCode(
      customer?.email ?? address,
      customer?.id ?? null,
      'portal',
      caller,
      options.productId,
      portalSystem,
    )
    return { kind: 'sent' }
  }

  /** `POST /customers/:id/portal-link`: mails the customer a sign-in code and a link to the portal. */
  async sendPortalLink(principal: Principal, customerId: CustomerId, portalEnabled: boolean): Promise<void> {
    requireAdmin(principal, 'mail a customer a portal sign-in link')
    const customer = await this.#portal.findCustomer(customerId)
    if (customer === undefined) {
      throw new DomainError('customer_not_found', `No customer ${customerId} exists.`)
    }
    if (!portalEnabled || this.#templates === undefined) {
      throw new DomainError(
        'portal_unavailable',
        portalEnabled
          ? 'This server sends no mail (KEYTURN_SMTP_URL is unset), so no sign-in code can reach the customer.'
          : 'The customer portal is off (KEYTURN_PORTAL=false).',
      )
    }
    await this.#issueCode(
      customer.email,
      customer.id,
      'portalLink',
      { ip: '', requestId: principal.requestId ?? '' },
      undefined,
      principal,
    )
  }

  async #issueCode(
    email: string,
    customerId: CustomerId | null,
    via: 'portal' | 'portalLink',
    caller: Caller,
    productId: ProductId | undefined,
    by: Principal | SystemActor,
  ): Promise<void> {
    const now = this.#clock.now()
    const id = newId('signInCode', now.getTime())
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
    const branding = await this.#mailBranding(customerId, productId)
    // Rendered for any address, so an unknown one costs the same work.
    const rendered = this.#templates?.render('portal-sign-in', {
      ...branding,
      // The link goes to the page that takes the code, for this address.
      portalUrl:
        this.#portalUrl === null
          ? branding.portalUrl
          : `${this.#portalUrl}/code?email=${encodeURIComponent(email)}${productId === undefined ? '' : `&product=${productId}`}`,
      code,
      minutes: codeLifetimeMs / 60_000,
    })
    await this.#storage.write(by, async ({ portal, events }) => {
      await portal.insertCode({
        id,
        emailDigest: this.#emailDigest(email),
        customerId,
        codeDigest: this.#codeDigest(id, code),
        attempts: 0,
        expiresAt: new Date(now.getTime() + codeLifetimeMs),
        createdAt: now,
      })
      if (customerId !== null && rendered !== undefined) {
        await portal.queueMail(
          {
            template: 'portal-sign-in',
            productId: productId ?? null,
            customerId,
            message: { to: email, ...rendered },
          },
          now,
        )
      }
      events.record('portal.sign_in_requested', null, {
        customerId,
        via,
        ...(via === 'portal' ? { ip: caller.ip } : {}),
      })
    })
  }

  /** The branding of the product asked for, if the customer has a license of it; else of their newest license's product. */
  async #mailBranding(
    customerId: CustomerId | null,
    productId: ProductId | undefined,
  ): Promise<MailVariables> {
    // Read for any address (no license has the placeholder customer): the same query either way.
    const licenses = await this.#portal.licensesOf(customerId ?? ('cus_' as CustomerId), maxLicensesShown)
    const chosen = licenses.find((license) => license.productId === productId) ?? licenses[0]
    return (
      chosen?.branding ?? {
        productName: 'your licenses',
        supportEmail: null,
        supportUrl: null,
        portalUrl: null,
        logoUrl: null,
        accentColor: null,
      }
    )
  }

  /** Checks the code; on success starts a customer session (single use: the code is spent). */
  async signIn(email: string, code: string, caller: Caller): Promise<SignInOutcome> {
    const address = email.trim()
    const gate = this.#tryLimits.check(address, caller.ip)
    if (!gate.allowed) {
      await this.#failed(null, 'rate_limited', caller)
      return { kind: 'rate_limited', retryAfterMs: gate.retryAfterMs }
    }
    const now = this.#clock.now()
    const stored = await this.#portal.latestCode(this.#emailDigest(address))
    if (stored === undefined || stored.expiresAt.getTime() <= now.getTime() || stored.attempts >= codeTries) {
      this.#tryLimits.recordFailure(address, caller.ip)
      const reason = stored !== undefined && stored.attempts >= codeTries ? 'too_many_tries' : 'no_code'
      await this.#failed(stored?.customerId ?? null, reason, caller)
      return { kind: 'refused', reason }
    }
    const given = /^\d{6}$/.test(code.trim()) ? code.trim() : ''
    const right = digestsEqual(stored.codeDigest, this.#codeDigest(stored.id, given))
    if (!right || stored.customerId === null) {
      this.#tryLimits.recordFailure(address, caller.ip)
      const tries = await this.#storage.write(portalSystem, async ({ portal, events }) => {
        const count = await portal.countWrongTry(stored.id)
        events.record('portal.sign_in_failed', null, {
          customerId: stored.customerId,
          reason: count >= codeTries ? 'too_many_tries' : 'wrong_code',
          ip: caller.ip,
        })
        return count
      })
      return { kind: 'refused', reason: tries >= codeTries ? 'too_many_tries' : 'wrong_code' }
    }
    const customerId = stored.customerId
    const used = await this.#storage.write(this.#actor(customerId, caller), async ({ portal }) =>
      portal.useCode(stored.id, now),
    )
    if (!used) {
      await this.#failed(customerId, 'no_code', caller)
      return { kind: 'refused', reason: 'no_code' }
    }
    this.#tryLimits.recordSuccess(address)
    const started = await this.sessions.start('customer', customerId)
    await this.#storage.write(this.#actor(customerId, caller), async ({ events }) => {
      events.record('portal.signed_in', null, { customerId, sessionId: started.session.id, ip: caller.ip })
    })
    return { kind: 'signed_in', started }
  }

  async #failed(customerId: CustomerId | null, reason: string, caller: Caller): Promise<void> {
    await this.#storage.write(portalSystem, async ({ events }) => {
      events.record('portal.sign_in_failed', null, { customerId, reason, ip: caller.ip })
    })
  }

  /**
   * Housekeeping (a background job in every process): ends the rows of sessions past their expiry,
   * of codes expired for a day, and of transfers older than the longest transfer window.
   */
  async purge(): Promise<number> {
    const now = this.#clock.now().getTime()
    const sessions = await this.sessions.deleteExpired()
    const rows = await this.#portal.purge(new Date(now - 86_400_000), new Date(now - 366 * 86_400_000))
    return sessions + rows
  }

  /** The customer's live portal sessions (admin keys). */
  async listSessions(principal: Principal, customerId: CustomerId): Promise<readonly Session[]> {
    requireAdmin(principal, "list a customer's portal sessions")
    if ((await this.#portal.findCustomer(customerId)) === undefined) {
      throw new DomainError('customer_not_found', `No customer ${customerId} exists.`)
    }
    return this.sessions.listOf('customer', customerId)
  }

  /**
   * Ends one of the customer's portal sessions (admin keys); the event says who did it. A session
   * that is gone already (ended, expired, another customer's) leaves nothing to do: no error.
   */
  async revokeSession(principal: Principal, customerId: CustomerId, sessionId: string): Promise<void> {
    requireAdmin(principal, "revoke a customer's portal session")
    const sessions = await this.listSessions(principal, customerId)
    if (!sessions.some((session) => session.id === sessionId)) {
      return
    }
    await this.sessions.revoke('customer', sessionId)
    await this.#storage.write(principal, async ({ events }) => {
      events.record('portal.signed_out', null, { customerId, sessionId, revoked: true })
    })
  }

  /** Ends the session (or, with `everywhere`, every session of the customer). */
  async signOut(session: Session, caller: Caller, everywhere: boolean): Promise<void> {
    const customerId = session.subjectId as CustomerId
    if (everywhere) {
      await this.sessions.revokeAllOf('customer', customerId)
    } else {
      await this.sessions.revoke('customer', session.id)
    }
    await this.#storage.write(this.#actor(customerId, caller), async ({ events }) => {
      events.record('portal.signed_out', null, {
        customerId,
        sessionId: session.id,
        ...(everywhere ? { everywhere: true } : {}),
      })
    })
  }

  /** The customer's licenses (newest first, at most `maxLicensesShown`) and their machines. */
  async overview(customerId: CustomerId): Promise<PortalOverview | undefined> {
    const customer = await this.#portal.findCustomer(customerId)
    if (customer === undefined) {
      return undefined
    }
    const now = this.#clock.now()
    const owned = await this.#portal.licensesOf(customerId, maxLicensesShown)
    const machines = await this.#portal.machinesOf(
      owned.map((license) => license.id),
      now,
    )
    const licenses: PortalLicense[] = []
    for (const license of owned) {
      const stored = await this.#licenses.find({ id: license.id })
      if (stored === undefined) {
        continue
      }
      licenses.push({
        view: await this.#licenses.viewOf(stored, now),
        owned: license,
        machines: machines.filter((machine) => machine.licenseId === license.id),
        transfersLeft: await this.#transfersLeft(license, now),
      })
    }
    return { customer, licenses }
  }

  /** One of the customer's licenses and its machines, as the overview shows it; undefined: not theirs. */
  async license(customerId: CustomerId, id: LicenseId): Promise<PortalOverview | undefined> {
    const overview = await this.overview(customerId)
    const license = overview?.licenses.find((item) => item.view.license.id === id)
    return overview === undefined || license === undefined ? undefined : { ...overview, licenses: [license] }
  }

  async #transfersLeft(license: OwnedLicense, now: Date): Promise<number | null> {
    if (license.maxTransfers === null) {
      return null
    }
    const since = new Date(now.getTime() - license.transferPeriod * 1000)
    return Math.max(0, license.maxTransfers - (await this.#portal.countTransfers(license.id, since)))
  }

  /**
   * Deactivates one of the customer's machines, unless the license's transfers in the rolling
   * window (`maxTransfers` per `transferPeriod`, read live from its policy) are used up. The
   * count and the deactivation share one transaction with the license row locked, so two
   * concurrent deactivations cannot both take the last transfer. A machine activated offline keeps
   * working on its license file whatever the server says, so it is freed only with the code it
   * shows once it deleted that file (`deactivateOffline`, which passes `byCode`).
   */
  async deactivate(
    customerId: CustomerId,
    id: ActivationId,
    caller: Caller,
    byCode = false,
  ): Promise<DeactivateOutcome> {
    const now = this.#clock.now()
    // Counted once the transaction committed (a retried attempt starts again from nothing).
    let deactivated: ProductId | undefined
    const outcome = await this.#storage.write<DeactivateOutcome>(
      this.#actor(customerId, caller),
      async ({ portal, activations, events }) => {
        deactivated = undefined
        const found = await portal.findOwnedMachine(customerId, id, now)
        if (found === undefined) {
          return { kind: 'not_found' }
        }
        const { license, machine } = found
        if (machine.offline && !byCode) {
          return { kind: 'code_required', machine }
        }
        await portal.lockLicense(license.id)
        if (license.maxTransfers !== null) {
          const since = new Date(now.getTime() - license.transferPeriod * 1000)
          if ((await portal.countTransfers(license.id, since)) >= license.maxTransfers) {
            return {
              kind: 'transfer_limit_reached',
              maxTransfers: license.maxTransfers,
              transferPeriod: license.transferPeriod,
            }
          }
        }
        const deleted = await activations.deactivate(machine.id, now)
        if (deleted === undefined) {
          return { kind: 'not_found' }
        }
        await portal.recordTransfer({ licenseId: license.id, activationId: machine.id, customerId, at: now })
        events.record('activation.deleted', deleted.productId, toActivationResource(deleted))
        deactivated = deleted.productId
        return { kind: 'deactivated', machine }
      },
    )
    if (deactivated !== undefined) {
      this.#counts.count(deactivated, 'deactivations')
    }
    return outcome
  }

  /**
   * A license file for one of the customer's machines, bound to it and encrypted for it (the
   * application opens it with the license key on that machine): for machines that must work
   * offline. Only for an active license.
   */
  async licenseFile(customerId: CustomerId, id: ActivationId, caller: Caller): Promise<LicenseFileOutcome> {
    const found = await this.#portal.findOwnedMachine(customerId, id, this.#clock.now())
    const license = found === undefined ? undefined : await this.#licenses.find({ id: found.license.id })
    if (found === undefined || license === undefined) {
      return { kind: 'not_found' }
    }
    const issued = await this.#licenseFiles.issueForCustomerMachine(
      this.#actor(customerId, caller),
      await this.#licenses.viewOf(license, this.#clock.now()),
      { activationId: found.machine.id, fingerprint: found.machine.fingerprint },
    )
    if (issued === 'license_not_active') {
      return { kind: 'license_not_active' }
    }
    const name = fileNamePart(found.machine.name ?? found.machine.fingerprint)
    return { kind: 'issued', licenseFile: issued.licenseFile, fileName: `license-${name}.lic` }
  }

  /**
   * Answers an activation request file the customer pasted or uploaded with the machine's license
   * file, exactly as the API does (same seat limit, transaction and events), with the customer as
   * actor; only for `licenseId`, a license of theirs (another license's key, the customer's or
   * another customer's, is refused as unknown).
   */
  async activateOffline(
    customerId: CustomerId,
    licenseId: LicenseId,
    request: string,
    caller: Caller,
  ): Promise<OfflineActivationOutcome> {
    try {
      const { activation, file } = await this.#offline.activate(
        this.#actor(customerId, caller),
        { request },
        licenseId,
      )
      const machineName = activation.name ?? activation.fingerprint
      return {
        kind: 'issued',
        licenseFile: file.licenseFile,
        fileName: `license-${fileNamePart(machineName)}.lic`,
        machineName,
      }
    } catch (error) {
      return refusalOf(error)
    }
  }

  /**
   * Frees one of the customer's machines with the deactivation code it printed (the offline
   * service checks the code and counts wrong ones); the seat is freed by `deactivate`, so the
   * license's transfer limit applies as to any deactivation in the portal.
   */
  async deactivateOffline(
    customerId: CustomerId,
    id: ActivationId,
    code: string,
    caller: Caller,
  ): Promise<OfflineDeactivationOutcome> {
    try {
      return await this.#offline.deactivateWith(this.#actor(customerId, caller), id, { code }, () =>
        this.deactivate(customerId, id, caller, true),
      )
    } catch (error) {
      const refusal = refusalOf(error)
      return refusal.code === 'activation_not_found' ? { kind: 'not_found' } : refusal
    }
  }

  /** Mails the license key to the customer again (whatever their mail opt-out: they asked for it). */
  async resendKey(
    customerId: CustomerId,
    id: LicenseId,
    caller: Caller,
  ): Promise<'sent' | 'not_found' | 'no_mail'> {
    const owned = await this.#portal.findOwnedLicense(customerId, id)
    const customer = await this.#portal.findCustomer(customerId)
    const license = owned === undefined ? undefined : await this.#licenses.find({ id })
    if (owned === undefined || customer === undefined || license === undefined) {
      return 'not_found'
    }
    if (this.#templates === undefined) {
      return 'no_mail'
    }
    const now = this.#clock.now()
    const rendered = this.#templates.render('license-issued', {
      ...owned.branding,
      key: license.key,
      expiresAt: license.expirationDate?.toISOString().slice(0, 10) ?? null,
    })
    await this.#storage.write(this.#actor(customerId, caller), async ({ portal, events }) => {
      await portal.queueMail(
        {
          template: 'license-issued',
          productId: owned.productId,
          customerId,
          message: { to: customer.email, ...rendered },
        },
        now,
      )
      events.record('portal.key_resent', owned.productId, { customerId, licenseId: id })
    })
    return 'sent'
  }

  #actor(customerId: CustomerId, caller: Caller): CustomerActor {
    return {
      type: 'customer',
      id: customerId,
      ...(caller.requestId === '' ? {} : { requestId: caller.requestId }),
    }
  }

  #emailDigest(email: string): string {
    return digestSecret(this.#key, `email:${email.trim().toLowerCase()}`)
  }

  #codeDigest(id: string, code: string): string {
    return digestSecret(this.#key, `code:${id}:${code}`)
  }
}

/** A machine's name as a safe part of a file name. */
function fileNamePart(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 60) || 'machine'
}

/** A refusal of the offline service (a DomainError) as an outcome; anything else is thrown on. */
function refusalOf(error: unknown): OfflineRefusal {
  if (!(error instanceof DomainError)) {
    throw error
  }
  const { retryAfter, triesLeft } = error.extensions ?? {}
  return {
    kind: 'refused',
    code: error.code,
    status: errorCatalogue[error.code].status,
    detail: error.message,
    ...(typeof retryAfter === 'number' ? { retryAfter } : {}),
    ...(typeof triesLeft === 'number' ? { triesLeft } : {}),
  }
}
