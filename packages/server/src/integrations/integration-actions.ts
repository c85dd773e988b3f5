import { type CustomerId, type LicenseId, maxMaxActivations } from '@keyturn/protocol'
import type { ActivityCounts } from '../core/activity-counts.js'
import { newId } from '../core/ids.js'
import type { EventRecorder, UnitOfWork } from '../core/unit-of-work.js'
import { toCustomerResource } from '../customers/customer-resource.js'
import type { CustomerStore } from '../customers/customer-store.js'
import { type License, viewAt } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import { newLicenseFrom } from '../licenses/license-service.js'
import type { LicenseChanges, LicenseStore } from '../licenses/license-store.js'
import type { PolicyStore } from '../policies/policy-store.js'
import { type Integration, mappingFor } from './integration.js'
import type { IntegrationStore, ReceivedEvent } from './integration-store.js'

/** The stores one received event is recorded and acted on with, in one transaction. */
export interface ActionStores {
  readonly integrations: IntegrationStore
  readonly customers: CustomerStore
  readonly licenses: LicenseStore
  readonly policies: PolicyStore
}

export type ActionStorage = UnitOfWork<ActionStores>

/**
 * What an action works with: the transaction's stores, its events, and the daily counts of what it
 * did (given to the statistics once the transaction committed: `CountsAfterCommit`).
 */
export type ActionContext = ActionStores & {
  readonly events: EventRecorder
  readonly counts: ActivityCounts
}

/** A provider object (an order, a subscription, a transaction) named by its kind and id. */
export interface ProviderObject {
  readonly kind: string
  readonly id: string
}

/** A purchase as every provider's payload reduces to it. */
export interface Purchase {
  readonly kind: 'purchase'
  /** The provider's order or subscription the license is linked to. */
  readonly objectKind: string
  readonly objectId: string
  /** Other provider objects later events name the purchase by (Stripe: the PaymentIntent). */
  readonly alsoLinks?: readonly ProviderObject[]
  readonly providerItemId: string
  /** The buyer; or, when the payload names only the provider's customer, that customer's link. */
  readonly buyer:
    | { readonly email: string; readonly name: string | null }
    | { readonly providerCustomerId: string }
  /**
   * A subscription's paid period ends here: the license expires then (instead of after its
   * policy's duration) unless a later payment renews it.
   */
  readonly periodEnd?: Date
  /** How many were bought (1 when the payload does not say); seats when the policy says so. */
  readonly quantity?: number
}

/**
 * A change to a subscription whose license already exists, applied in this order: the plan (a
 * mapped item of another policy moves the license there), a payment (lifts payment grace; with
 * `paidThrough` the license runs at least until then), a failed payment (payment grace starts; the
 * license runs at least until `unpaidThrough`), and an end (`endsAt`: the license expires then at
 * the latest, never earlier than the end of what was paid for: providers send the period's end).
 */
export interface SubscriptionChange {
  readonly kind: 'subscription'
  readonly objectKind: string
  readonly objectId: string
  readonly providerItemId?: string
  /** The subscription's quantity now, when the payload says: seats when the policy says so. */
  readonly quantity?: number
  readonly paid?: { readonly paidThrough?: Date }
  readonly paymentFailed?: { readonly unpaidThrough?: Date }
  readonly endsAt?: Date
  /** Other provider objects of this change to link to the license (a renewal's invoice). */
  readonly alsoLinks?: readonly ProviderObject[]
}

/**
 * A provider object that names one already linked (Stripe: the payment of an invoice), linked to the
 * same license so that later events naming it (a refund) find the license. Pending until the
 * object it names is linked.
 */
export interface Link {
  readonly kind: 'link'
  readonly objectKind: string
  readonly objectId: string
  readonly link: ProviderObject
}

/** A provider customer seen with its address (Paddle sends it apart from the purchase). */
export interface CustomerSeen {
  readonly kind: 'customer'
  readonly providerCustomerId: string
  readonly email: string
  readonly name: string | null
}

/** A refund or chargeback of what a provider object bought. */
export interface Refund {
  readonly kind: 'refund'
  readonly objectKind: string
  readonly objectId: string
}

/** What a verified event asks for; `ignored` says why it asks for nothing. */
export type Action =
  | Purchase
  | Refund
  | SubscriptionChange
  | CustomerSeen
  | Link
  | { readonly kind: 'ignored'; readonly why: string }

/** What an action did, as recorded on the received event. */
export interface Settled {
  readonly status: ReceivedEvent['status']
  readonly outcome: string
}

/**
 * Carries out a purchase: the customer with the buyer's address (created when there is none) and a
 * license on the mapped policy. Its `license.created` event queues the "license issued" mail.
 * Unmapped items create nothing. A purchase whose object (or one of its other objects) is already
 * linked to a license creates none: it links the rest to that license and, for a subscription,
 * renews it to the period's end. A buyer named only by the provider's customer id waits (`pending`)
 * until that customer's address has arrived.
 */
export async function purchase(
  stores: ActionContext,
  integration: Integration,
  bought: Purchase,
  now: Date,
): Promise<Settled> {
  const objects = [{ kind: bought.objectKind, id: bought.objectId }, ...(bought.alsoLinks ?? [])]
  for (const object of objects) {
    const existing = await stores.integrations.linkedLicense(integration.id, object.kind, object.id)
    if (existing !== undefined) {
      return alreadyBought(stores, integration, bought, objects, existing, now)
    }
  }
  const mapping = mappingFor(integration, bought.providerItemId)
  if (mapping === undefined) {
    return { status: 'ignored', outcome: `Item ${bought.providerItemId} is not mapped; nothing was created.` }
  }
  const policy = await stores.policies.findById(mapping.policyId)
  if (policy === undefined) {
    return {
      status: 'failed',
      outcome: `Policy ${mapping.policyId} of item ${bought.providerItemId} no longer exists.`,
    }
  }
  const buyer = await buyerOf(stores, integration, bought, now)
  if (buyer.kind !== 'found') {
    return buyer.settled
  }
  const { customerId, email } = buyer
  const made = newLicenseFrom(
    { productId: mapping.productId, policyId: mapping.policyId, customerId },
    policy,
    now,
  )
  // A subscription's license runs to the end of the period paid for; the next payment renews it.
  const seats = { ...made, maxActivations: seatsFor(policy, bought.quantity) }
  const license =
    bought.periodEnd === undefined
      ? seats
      : { ...seats, expirationDate: bought.periodEnd, firstActivationDuration: null }
  const view = viewAt({ ...license, entitlements: [...policy.entitlements].sort() }, now)
  stores.events.record('license.created', license.productId, toLicenseResource(view))
  const inserted = await stores.licenses.insert(license, [], [])
  if (inserted !== 'ok') {
    return {
      status: 'failed',
      outcome: `No license was created for item ${bought.providerItemId} (${inserted}).`,
    }
  }
  for (const object of objects) {
    await stores.integrations.link(integration.id, object.kind, object.id, customerId, license.id, now)
  }
  stores.counts.count(license.productId, 'licensesCreated')
  stores.counts.count(license.productId, 'licensesSold')
  return {
    status: 'processed',
    outcome: `Created license ${license.id} for customer ${customerId} (${email}).`,
  }
}

/** The customer a purchase is for: found or created by address, or found by the provider's customer link. */
async function buyerOf(
  stores: ActionContext,
  integration: Integration,
  bought: Purchase,
  now: Date,
): Promise<
  | { readonly kind: 'found'; readonly customerId: CustomerId; readonly email: string }
  | { readonly kind: 'not_found'; readonly settled: Settled }
> {
  if ('providerCustomerId' in bought.buyer) {
    const linked = await stores.integrations.linkedCustomer(
      integration.id,
      'customer',
      bought.buyer.providerCustomerId,
    )
    return linked === undefined
      ? {
          kind: 'not_found',
          settled: {
            status: 'pending',
            outcome: `The address of customer ${bought.buyer.providerCustomerId} has not arrived yet.`,
          },
        }
      : { kind: 'found', customerId: linked, email: bought.buyer.providerCustomerId }
  }
  const found = await customerFor(stores, bought.buyer.email, bought.buyer.name, now)
  return found.kind === 'found'
    ? { kind: 'found', customerId: found.customerId, email: bought.buyer.email }
    : { kind: 'not_found', settled: { status: 'failed', outcome: found.why } }
}

/** The customer with this address, created when there is none (with its `customer.created` event). */
async function customerFor(
  stores: ActionContext,
  email: string,
  name: string | null,
  now: Date,
): Promise<
  | { readonly kind: 'found'; readonly customerId: CustomerId }
  | { readonly kind: 'failed'; readonly why: string }
> {
  const existing = await stores.integrations.customerIdByEmail(email)
  if (existing !== undefined) {
    return { kind: 'found', customerId: existing }
  }
  const customer = {
    id: newId('customer'),
    email,
    name,
    metadata: {},
    mailOptOut: false,
    createdAt: now,
    updatedAt: now,
  }
  const written = await stores.customers.insert(customer)
  if (written.kind !== 'ok') {
    return { kind: 'failed', why: `The customer ${email} could not be created (${written.kind}).` }
  }
  stores.events.record('customer.created', null, toCustomerResource(written.customer))
  return { kind: 'found', customerId: customer.id }
}

/** A purchase of something already linked to `licenseId`: link the rest; a subscription's period renews it. */
async function alreadyBought(
  stores: ActionContext,
  integration: Integration,
  bought: Purchase,
  objects: readonly ProviderObject[],
  licenseId: LicenseId,
  now: Date,
): Promise<Settled> {
  const current = await stores.licenses.findForUpdate(licenseId)
  if (current === undefined) {
    return { status: 'ignored', outcome: `License ${licenseId} no longer exists.` }
  }
  const subscriptionIsNew =
    (await stores.integrations.linkedLicense(integration.id, bought.objectKind, bought.objectId)) ===
    undefined
  for (const object of objects) {
    if ((await stores.integrations.linkedLicense(integration.id, object.kind, object.id)) === undefined) {
      await stores.integrations.link(
        integration.id,
        object.kind,
        object.id,
        current.customerId,
        licenseId,
        now,
      )
    }
  }
  if (bought.periodEnd === undefined) {
    return { status: 'processed', outcome: `Already bought as license ${licenseId}; nothing more to do.` }
  }
  if (subscriptionIsNew && current.expirationDate?.getTime() !== bought.periodEnd.getTime()) {
    // Its order came first and gave it the policy's duration: the subscription's period decides.
    const updated = await stores.licenses.update(licenseId, {
      updatedAt: now,
      expirationDate: bought.periodEnd,
      firstActivationDuration: null,
    })
    if (typeof updated !== 'object') {
      throw new Error(`license ${licenseId} could not be changed (${String(updated)})`) // locked: cannot happen
    }
    stores.events.record('license.updated', updated.productId, toLicenseResource(viewAt(updated, now)))
    return {
      status: 'processed',
      outcome: `Already bought as license ${licenseId}; it runs to the subscription's period end, ${bought.periodEnd.toISOString()}.`,
    }
  }
  const renewed = await applyChange(
    stores,
    integration,
    current,
    {
      kind: 'subscription',
      objectKind: bought.objectKind,
      objectId: bought.objectId,
      paid: { paidThrough: bought.periodEnd },
    },
    now,
  )
  return { status: 'processed', outcome: `Already bought as license ${licenseId}. ${renewed}` }
}

/** Remembers the address of a provider customer (and makes the Keyturn customer) for purchases naming it. */
export async function customerSeen(
  stores: ActionContext,
  integration: Integration,
  seen: CustomerSeen,
  now: Date,
): Promise<Settled> {
  const found = await customerFor(stores, seen.email, seen.name, now)
  if (found.kind !== 'found') {
    return { status: 'failed', outcome: found.why }
  }
  const linked = await stores.integrations.linkedCustomer(integration.id, 'customer', seen.providerCustomerId)
  if (linked === undefined) {
    await stores.integrations.link(
      integration.id,
      'customer',
      seen.providerCustomerId,
      found.customerId,
      null,
      now,
    )
  }
  return {
    status: 'processed',
    outcome: `Customer ${seen.providerCustomerId} is Keyturn customer ${found.customerId} (${seen.email}).`,
  }
}

/**
 * Carries out a subscription change on the license the subscription bought. Not linked yet (its
 * purchase has not arrived): `pending`, and the retry job tries again.
 */
export async function subscriptionChange(
  stores: ActionContext,
  integration: Integration,
  change: SubscriptionChange,
  now: Date,
): Promise<Settled> {
  const licenseId = await stores.integrations.linkedLicense(
    integration.id,
    change.objectKind,
    change.objectId,
  )
  if (licenseId === undefined) {
    if (change.providerItemId !== undefined && mappingFor(integration, change.providerItemId) === undefined) {
      // Nothing was sold through this integration for it, and nothing will be: not worth retrying.
      return {
        status: 'ignored',
        outcome: `No license is linked to ${change.objectKind} ${change.objectId}, and its item ${change.providerItemId} is not mapped.`,
      }
    }
    return {
      status: 'pending',
      outcome: `No license is linked to ${change.objectKind} ${change.objectId} yet (its purchase has not arrived).`,
    }
  }
  const current = await stores.licenses.findForUpdate(licenseId)
  if (current === undefined) {
    return { status: 'ignored', outcome: `License ${licenseId} no longer exists.` }
  }
  for (const object of change.alsoLinks ?? []) {
    await linkOnce(stores, integration, object, current.customerId, licenseId, now)
  }
  return { status: 'processed', outcome: await applyChange(stores, integration, current, change, now) }
}

/** Links `object` to the license unless it is linked already. */
async function linkOnce(
  stores: ActionStores,
  integration: Integration,
  object: ProviderObject,
  customerId: CustomerId | null,
  licenseId: LicenseId,
  now: Date,
): Promise<boolean> {
  if ((await stores.integrations.linkedLicense(integration.id, object.kind, object.id)) !== undefined) {
    return false
  }
  await stores.integrations.link(integration.id, object.kind, object.id, customerId, licenseId, now)
  return true
}

/** Carries out a link: the object it names must be linked already (else pending). */
export async function linkObject(
  stores: ActionContext,
  integration: Integration,
  link: Link,
  now: Date,
): Promise<Settled> {
  const licenseId = await stores.integrations.linkedLicense(integration.id, link.objectKind, link.objectId)
  if (licenseId === undefined) {
    return {
      status: 'pending',
      outcome: `No license is linked to ${link.objectKind} ${link.objectId} yet.`,
    }
  }
  const license = await stores.licenses.findForUpdate(licenseId)
  const linked = await linkOnce(stores, integration, link.link, license?.customerId ?? null, licenseId, now)
  return {
    status: 'processed',
    outcome: linked
      ? `Linked ${link.link.kind} ${link.link.id} to license ${licenseId}.`
      : `${link.link.kind} ${link.link.id} was linked already.`,
  }
}

/** Applies `change` to the locked license `current`, one event per step that changed something; says what it did. */
async function applyChange(
  stores: ActionContext,
  integration: Integration,
  current: License,
  change: SubscriptionChange,
  now: Date,
): Promise<string> {
  let license = current
  const done: string[] = []
  const write = async (
    type:
      | 'license.policy_changed'
      | 'license.renewed'
      | 'license.payment_overdue'
      | 'license.payment_restored'
      | 'license.updated',
    changes: LicenseChanges,
    extra?: Readonly<Record<string, unknown>>,
  ) => {
    const updated = await stores.licenses.update(license.id, changes)
    if (typeof updated !== 'object') {
      throw new Error(`license ${license.id} could not be changed (${String(updated)})`) // locked: cannot happen
    }
    stores.events.record(type, updated.productId, { ...toLicenseResource(viewAt(updated, now)), ...extra })
    if (type === 'license.renewed') {
      stores.counts.count(updated.productId, 'licensesRenewed')
      stores.counts.count(updated.productId, 'providerRenewals')
    } else if (type === 'license.payment_overdue') {
      stores.counts.count(updated.productId, 'paymentFailures')
    }
    license = updated
  }
  if (change.providerItemId !== undefined) {
    const mapping = mappingFor(integration, change.providerItemId)
    if (mapping === undefined) {
      done.push(`Item ${change.providerItemId} is not mapped; the policy stays.`)
    } else if (mapping.policyId !== license.policyId && mapping.productId === license.productId) {
      const policy = await stores.policies.findById(mapping.policyId)
      if (policy === undefined) {
        done.push(`Policy ${mapping.policyId} no longer exists; the policy stays.`)
      } else {
        const previousPolicyId = license.policyId
        // The fields a policy gives a license take the new policy's values; the expiry is kept (the
        // provider's period decides it). Machines above a lower limit keep working.
        await write(
          'license.policy_changed',
          {
            updatedAt: now,
            policyId: policy.id,
            maxActivations: seatsFor(policy, change.quantity),
            heartbeatTtl: policy.heartbeatTtl,
            maxUses: policy.maxUses,
          },
          { previousPolicyId },
        )
        done.push(`Moved to policy ${policy.id}.`)
      }
    }
  }
  if (change.quantity !== undefined && license.policyId !== null) {
    const policy = await stores.policies.findById(license.policyId)
    const seats = policy === undefined ? license.maxActivations : seatsFor(policy, change.quantity)
    if (policy?.seatsPerQuantity === true && seats !== license.maxActivations) {
      await write('license.updated', { updatedAt: now, maxActivations: seats })
      done.push(`${seats} activations for a quantity of ${change.quantity}.`)
    }
  }
  if (change.paid !== undefined) {
    const { paidThrough } = change.paid
    if (license.paymentGraceEndsAt !== null) {
      await write('license.payment_restored', { updatedAt: now, paymentGraceEndsAt: null })
      done.push('Payment restored.')
    }
    // Later only: an old period delivered late shortens nothing. A license that never expires stays so.
    if (
      paidThrough !== undefined &&
      license.expirationDate !== null &&
      paidThrough > license.expirationDate
    ) {
      await write('license.renewed', {
        updatedAt: now,
        expirationDate: paidThrough,
        firstActivationDuration: null,
      })
      done.push(`Renewed to ${paidThrough.toISOString()}.`)
    }
  }
  if (change.paymentFailed !== undefined && license.paymentGraceEndsAt === null) {
    const graceEndsAt = new Date(now.getTime() + integration.paymentGraceDays * 86_400_000)
    // It keeps working through the grace: its expiry becomes at least the unpaid period's end; where
    // the event does not name it (Lemon Squeezy), one policy duration after the paid period's end.
    const runsTo = change.paymentFailed.unpaidThrough ?? (await unpaidPeriodEnd(stores, license, graceEndsAt))
    const expiry =
      license.expirationDate !== null && runsTo > license.expirationDate
        ? { expirationDate: runsTo, firstActivationDuration: null }
        : {}
    await write(
      'license.payment_overdue',
      { updatedAt: now, paymentGraceEndsAt: graceEndsAt, ...expiry },
      { paymentGraceEndsAt: graceEndsAt.toISOString() },
    )
    done.push(`Payment overdue; grace until ${graceEndsAt.toISOString()}.`)
  }
  if (change.endsAt !== undefined) {
    const endsAt = change.endsAt
    if (license.expirationDate === null || endsAt < license.expirationDate) {
      await write('license.updated', {
        updatedAt: now,
        expirationDate: endsAt,
        firstActivationDuration: null,
      })
    }
    done.push(`Ends ${(license.expirationDate ?? endsAt).toISOString()}.`)
  }
  return done.length === 0
    ? `License ${license.id}: nothing to change.`
    : `License ${license.id}: ${done.join(' ')}`
}

/**
 * The activations a license of `policy` bought `quantity` times gets: the policy's limit, times the
 * quantity when the policy says so (seats per quantity), at most the largest limit a license takes.
 */
export function seatsFor(
  policy: { readonly maxActivations: number | null; readonly seatsPerQuantity: boolean },
  quantity: number | undefined,
): number | null {
  if (policy.maxActivations === null || !policy.seatsPerQuantity || quantity === undefined) {
    return policy.maxActivations
  }
  return Math.min(policy.maxActivations * Math.max(1, quantity), maxMaxActivations)
}

/** The unpaid period's end when the provider does not say: the paid one's plus the policy's duration. */
async function unpaidPeriodEnd(stores: ActionStores, license: License, graceEndsAt: Date): Promise<Date> {
  const policy = license.policyId === null ? undefined : await stores.policies.findById(license.policyId)
  if (policy?.duration == null || license.expirationDate === null) {
    return graceEndsAt
  }
  const next = new Date(license.expirationDate.getTime() + policy.duration * 1000)
  return next > graceEndsAt ? next : graceEndsAt
}

/** Carries out what a verified event asks for, in the caller's transaction. */
export function carryOut(
  stores: ActionContext,
  integration: Integration,
  action: Action,
  now: Date,
): Promise<Settled> {
  switch (action.kind) {
    case 'purchase':
      return purchase(stores, integration, action, now)
    case 'refund':
      return refund(stores, integration, action, now)
    case 'subscription':
      return subscriptionChange(stores, integration, action, now)
    case 'customer':
      return customerSeen(stores, integration, action, now)
    case 'link':
      return linkObject(stores, integration, action, now)
    case 'ignored':
      return Promise.resolve({ status: 'ignored', outcome: action.why })
  }
}

/**
 * Carries out a refund: the license the object bought is revoked when the integration's `onRefund`
 * is `revoke` (already revoked: nothing more); with `none` it is kept.
 */
export async function refund(
  stores: ActionContext,
  integration: Integration,
  refunded: Refund,
  now: Date,
): Promise<Settled> {
  const licenseId = await stores.integrations.linkedLicense(
    integration.id,
    refunded.objectKind,
    refunded.objectId,
  )
  if (licenseId === undefined) {
    return {
      status: 'ignored',
      outcome: `No license is linked to ${refunded.objectKind} ${refunded.objectId}.`,
    }
  }
  if (integration.onRefund === 'none') {
    return { status: 'processed', outcome: `Refunded; license ${licenseId} is kept (onRefund is none).` }
  }
  const current = await stores.licenses.findForUpdate(licenseId)
  if (current === undefined) {
    return { status: 'ignored', outcome: `License ${licenseId} no longer exists.` }
  }
  if (current.revokedAt !== null) {
    return { status: 'processed', outcome: `Refunded; license ${licenseId} was already revoked.` }
  }
  const updated = await stores.licenses.update(licenseId, { revokedAt: now, updatedAt: now })
  if (typeof updated !== 'object') {
    return { status: 'failed', outcome: `License ${licenseId} could not be revoked.` }
  }
  stores.events.record('license.revoked', updated.productId, toLicenseResource(viewAt(updated, now)))
  stores.counts.count(updated.productId, 'licensesRevoked')
  stores.counts.count(updated.productId, 'refundRevocations')
  return { status: 'processed', outcome: `Refunded; revoked license ${licenseId}.` }
}
