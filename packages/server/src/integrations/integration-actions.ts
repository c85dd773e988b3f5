import { newId } from '../core/ids.js'
import type { EventRecorder, UnitOfWork } from '../core/unit-of-work.js'
import { toCustomerResource } from '../customers/customer-resource.js'
import type { CustomerStore } from '../customers/customer-store.js'
import { viewAt } from '../licenses/license.js'
import { toLicenseResource } from '../licenses/license-resource.js'
import { newLicenseFrom } from '../licenses/license-service.js'
import type { LicenseStore } from '../licenses/license-store.js'
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

/** A purchase as every provider's payload reduces to it. */
export interface Purchase {
  readonly kind: 'purchase'
  /** The provider's order or subscription the license is linked to. */
  readonly objectKind: string
  readonly objectId: string
  /** Other provider objects later events name the purchase by (Stripe: the PaymentIntent). */
  readonly alsoLinks?: readonly { readonly kind: string; readonly id: string }[]
  readonly providerItemId: string
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
export type Action = Purchase | Refund | { readonly kind: 'ignored'; readonly why: string }

/** What an action did, as recorded on the received event. */
export interface Settled {
  readonly status: ReceivedEvent['status']
  readonly outcome: string
}

/**
 * Carries out a purchase: the customer with the buyer's address (created when there is none) and a
 * license on the mapped policy. Its `license.created` event queues the "license issued" mail.
 * Unmapped items create nothing.
 */
export async function purchase(
  stores: ActionStores & { readonly events: EventRecorder },
  integration: Integration,
  bought: Purchase,
  now: Date,
): Promise<Settled> {
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
  let customerId = await stores.integrations.customerIdByEmail(bought.email)
  if (customerId === undefined) {
    const customer = {
      id: newId('customer'),
      email: bought.email,
      name: bought.name,
      metadata: {},
      mailOptOut: false,
      createdAt: now,
      updatedAt: now,
    }
    const written = await stores.customers.insert(customer)
    if (written.kind !== 'ok') {
      return {
        status: 'failed',
        outcome: `The customer ${bought.email} could not be created (${written.kind}).`,
      }
    }
    stores.events.record('customer.created', null, toCustomerResource(written.customer))
    customerId = customer.id
  }
  const license = newLicenseFrom(
    { productId: mapping.productId, policyId: mapping.policyId, customerId },
    policy,
    now,
  )
  const view = viewAt({ ...license, entitlements: [...policy.entitlements].sort() }, now)
  stores.events.record('license.created', license.productId, toLicenseResource(view))
  const inserted = await stores.licenses.insert(license, [], [])
  if (inserted !== 'ok') {
    return {
      status: 'failed',
      outcome: `No license was created for item ${bought.providerItemId} (${inserted}).`,
    }
  }
  await stores.integrations.link(
    integration.id,
    bought.objectKind,
    bought.objectId,
    customerId,
    license.id,
    now,
  )
  for (const other of bought.alsoLinks ?? []) {
    await stores.integrations.link(integration.id, other.kind, other.id, customerId, license.id, now)
  }
  return {
    status: 'processed',
    outcome: `Created license ${license.id} for customer ${customerId} (${bought.email}).`,
  }
}

/**
 * Carries out a refund: the license the object bought is revoked when the integration's `onRefund`
 * is `revoke` (already revoked: nothing more); with `none` it is kept.
 */
export async function refund(
  stores: ActionStores & { readonly events: EventRecorder },
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
  return { status: 'processed', outcome: `Refunded; revoked license ${licenseId}.` }
}
