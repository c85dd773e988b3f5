import type { ActivationId, CustomerId, LicenseId, ProductId } from '@keyturn/protocol'
import type { MailMessage } from '../mail/kysely-mail-outbox.js'
import type { MailVariables } from '../mail/mail-templates.js'

/** A one-time sign-in code as stored: its digest only. */
export interface StoredSignInCode {
  readonly id: string
  /** null: the address is no customer's (the code was stored but never mailed). */
  readonly customerId: CustomerId | null
  readonly codeDigest: string
  readonly attempts: number
  readonly expiresAt: Date
}

/** A license of the customer, with what the portal shows beside it and the transfer limit read live from its policy. */
export interface OwnedLicense {
  readonly id: LicenseId
  readonly productId: ProductId
  readonly branding: MailVariables
  /** Portal deactivations per `transferPeriod`; null: unlimited. */
  readonly maxTransfers: number | null
  /** Seconds. */
  readonly transferPeriod: number
}

export interface PortalMachine {
  readonly id: ActivationId
  readonly licenseId: LicenseId
  readonly fingerprint: string
  readonly name: string | null
  /** The `platform` entry of the activation's metadata, when the application sent one. */
  readonly platform: string | null
  readonly createdAt: Date
  readonly lastSeenAt: Date
  /** Activated by an offline request file: the machine is freed only with its deactivation code. */
  readonly offline: boolean
}

/** What the customer portal reads and writes (portal/). Every read of a license or machine is scoped to its customer. */
export interface PortalStore {
  /** The customer with this email (case-insensitive). */
  findCustomerByEmail(email: string): Promise<{ readonly id: CustomerId; readonly email: string } | undefined>
  findCustomer(id: CustomerId): Promise<{ readonly id: CustomerId; readonly email: string } | undefined>
  insertCode(
    code: StoredSignInCode & { readonly emailDigest: string; readonly createdAt: Date },
  ): Promise<void>
  /** How many codes were asked for the address since `since` (the per-address limit, shared by every process). */
  countCodesSince(emailDigest: string, since: Date): Promise<number>
  /** The newest code asked for the address, unless it was used. */
  latestCode(emailDigest: string): Promise<StoredSignInCode | undefined>
  /** Counts a wrong try; returns the tries so far. */
  countWrongTry(id: string): Promise<number>
  /** Marks the code used; false when another request used it first. */
  useCode(id: string, at: Date): Promise<boolean>
  /** Queues a mail in the change's transaction. */
  queueMail(
    mail: {
      readonly template: string
      readonly productId: ProductId | null
      readonly customerId: CustomerId
      readonly message: MailMessage
    },
    now: Date,
  ): Promise<void>
  /** The product's name and branding; undefined when it does not exist. */
  brandingOf(productId: ProductId): Promise<MailVariables | undefined>
  /** The customer's licenses, newest first, at most `limit`. */
  licensesOf(customerId: CustomerId, limit: number): Promise<readonly OwnedLicense[]>
  /** The license, if it is the customer's. */
  findOwnedLicense(customerId: CustomerId, id: LicenseId): Promise<OwnedLicense | undefined>
  /** The machine (alive activation) and its license, if the license is the customer's. */
  findOwnedMachine(
    customerId: CustomerId,
    id: ActivationId,
    now: Date,
  ): Promise<{ readonly machine: PortalMachine; readonly license: OwnedLicense } | undefined>
  /** The alive activations of the licenses. */
  machinesOf(licenseIds: readonly LicenseId[], now: Date): Promise<readonly PortalMachine[]>
  /** Locks the license's row until the transaction ends (its transfers are counted, then one added). */
  lockLicense(id: LicenseId): Promise<void>
  /** Portal deactivations of the license since `since`. */
  countTransfers(licenseId: LicenseId, since: Date): Promise<number>
  /**
   * Deletes sign-in codes that expired before `codesBefore` and transfers older than
   * `transfersBefore` (past any transfer window). Returns how many rows went.
   */
  purge(codesBefore: Date, transfersBefore: Date): Promise<number>
  recordTransfer(transfer: {
    readonly licenseId: LicenseId
    readonly activationId: ActivationId
    readonly customerId: CustomerId
    readonly at: Date
  }): Promise<void>
}
