/**
 * @module Events: the audit log and the payload of webhook deliveries. Every state change writes
 * one, in the same transaction as the change. `eventTypes` is the one catalogue: a feature that
 * adds a state change adds its type here (`<resource>.<past_tense>`) with an example of its data.
 */
import { type Static, Type } from 'typebox'
import {
  ApiKeyIdSchema,
  CustomerIdSchema,
  listQueryProperties,
  PaginatedSchema,
  ProductIdSchema,
  TimestampSchema,
} from './common.js'
import {
  exampleApiKey,
  exampleCustomer,
  exampleEntitlement,
  exampleKeyId,
  exampleLicense,
  exampleLicenseId,
  examplePolicy,
  exampleProductId,
  exampleProductKey,
  examplePublicKey,
  examplePublicKeyJwk,
  exampleTime,
  exampleWebhookEndpoint,
} from './examples.js'
import { exampleIntegrationResource } from './integrations.js'
import { exampleOperator } from './operators.js'

const exampleProduct = {
  id: exampleProductId,
  object: 'Product',
  name: 'Acme Photo Editor',
  status: 'active',
  publicKey: examplePublicKey,
  publicKeyJwk: examplePublicKeyJwk,
  keyId: exampleKeyId,
  metadata: {},
  createdAt: exampleTime,
  updatedAt: exampleTime,
} as const

const exampleActivation = {
  id: 'act_2Hq8RtYvN4mLp7XcKb3WsD',
  object: 'Activation',
  licenseId: exampleLicenseId,
  productId: exampleProductId,
  fingerprint: 'machine-7f3a9c',
  name: 'Design laptop',
  metadata: null,
  createdAt: exampleTime,
  lastSeenAt: exampleTime,
  lastHeartbeatAt: exampleTime,
  expiresAt: null,
} as const

/** Every event type, with an example of its `data` (the resource as the API returned it). */
export const eventTypeExamples = {
  'license.created': exampleLicense,
  'license.updated': { ...exampleLicense, maxActivations: 5 },
  /**
   * `PATCH /licenses/:id` with `policyId`: the license after the move, with the policy it left
   * (`previousPolicyId`, null when it had none).
   */
  'license.policy_changed': { ...exampleLicense, maxActivations: 5, previousPolicyId: null },
  'license.revoked': {
    ...exampleLicense,
    status: 'revoked',
    statusDetails: { ...exampleLicense.statusDetails, isRevoked: true },
  },
  'license.reinstated': exampleLicense,
  /** `POST /licenses/:id/renew`: the license with its new expiration date. */
  'license.renewed': { ...exampleLicense, expirationDate: '2032-01-01T00:00:00.000Z' },
  /**
   * A payment provider reported a failed payment for the subscription that pays for the license
   * (integrations): it keeps working until `paymentGraceEndsAt` (the integration's
   * `paymentGraceDays` later), then validates `payment_overdue` until the next payment.
   */
  'license.payment_overdue': { ...exampleLicense, paymentGraceEndsAt: '2030-01-08T00:00:00.000Z' },
  /** The next payment arrived after a failed one: the payment grace is lifted. */
  'license.payment_restored': exampleLicense,
  /**
   * A license made from a `firstActivation` policy was activated for the first time: its expiry
   * started, in the same transaction as the `activation.created` recorded beside it.
   */
  'license.expiration_started': {
    ...exampleLicense,
    activationCount: 1,
    expirationDate: '2027-01-01T00:00:00.000Z',
  },
  /**
   * The license reached one of its expiry notice days (KEYTURN_EXPIRY_NOTICE_DAYS, default 14 and
   * 3): sent once per license and notice day by a background job; `expiresInDays` is that notice day.
   */
  'license.expiring_soon': {
    ...exampleLicense,
    expirationDate: '2030-01-15T00:00:00.000Z',
    expiresInDays: 14,
  },
  /** The license's expiration date passed (sent once, by the same job); expiry itself needs no operation. */
  'license.expired': {
    ...exampleLicense,
    status: 'expired',
    statusDetails: { ...exampleLicense.statusDetails, isExpired: true },
  },
  /** The license the token was issued for; the token itself is never recorded. */
  'license.token_issued': exampleLicense,
  /** The license a license file was issued for; the file itself is never recorded. */
  'license.file_issued': exampleLicense,
  /** Recorded only when an endpoint subscribes to it or KEYTURN_RECORD_VALIDATIONS=true. */
  'license.validated': { isValid: true, reason: null, timestamp: exampleTime, license: exampleLicense },
  'license.validation_failed': {
    isValid: false,
    reason: 'revoked',
    timestamp: exampleTime,
    license: { ...exampleLicense, status: 'revoked' },
  },
  'activation.created': exampleActivation,
  'activation.deleted': exampleActivation,
  /** A floating seat whose lease ended without a heartbeat, as it was when removed (sweep or a new activation). */
  'activation.expired': {
    ...exampleActivation,
    fingerprint: 'ci-runner-41',
    name: null,
    expiresAt: '2030-01-01T00:15:00.000Z',
  },
  /** The license after uses were counted (`POST /licenses/usage`, `/licenses/:id/usage`). */
  'license.usage_incremented': { ...exampleLicense, maxUses: 1000, uses: 42 },
  /** The license after its uses were reset to 0. */
  'license.usage_reset': { ...exampleLicense, maxUses: 1000, uses: 0, usesResetAt: exampleTime },
  /** Customers are global: their events carry no productId. */
  'customer.created': exampleCustomer,
  'customer.updated': { ...exampleCustomer, name: 'Ada King' },
  /** The customer as it was. */
  'customer.deleted': exampleCustomer,
  'entitlement.created': exampleEntitlement,
  'entitlement.updated': { ...exampleEntitlement, name: 'Export to PDF and PNG' },
  /** The entitlement as it was; policies and licenses no longer carry it. */
  'entitlement.deleted': exampleEntitlement,
  'policy.created': examplePolicy,
  'policy.updated': { ...examplePolicy, maxActivations: 5 },
  /** The policy as it was. */
  'policy.deleted': examplePolicy,
  'product.created': exampleProduct,
  'product.updated': { ...exampleProduct, name: 'Acme Photo Editor 2' },
  'product.suspended': { ...exampleProduct, status: 'suspended' },
  'product.resumed': exampleProduct,
  /** The new current signing key, as `POST /products/:id/keys/rotate` returned it. */
  'product.key_rotated': exampleProductKey,
  /** Never the secret. */
  'api_key.created': exampleApiKey,
  'api_key.deleted': exampleApiKey,
  'webhook_endpoint.created': exampleWebhookEndpoint,
  'webhook_endpoint.updated': exampleWebhookEndpoint,
  'webhook_endpoint.deleted': exampleWebhookEndpoint,
  /** Emitted by the server (`actor: { type: "system", id: "webhook-deliveries" }`) after 5 days of failed deliveries. */
  'webhook_endpoint.disabled': { ...exampleWebhookEndpoint, enabled: false },
  /** Sent by `POST /webhook-endpoints/:id/test`, to that endpoint only. */
  'webhook_endpoint.test': exampleWebhookEndpoint,
  /**
   * The customer portal. Someone asked for a sign-in code (`customerId` null: the address is no
   * customer's, and no mail went out; the answer was the same). `via: "portalLink"`: by
   * `POST /customers/:id/portal-link`.
   */
  'portal.sign_in_requested': { customerId: exampleCustomer.id, via: 'portal', ip: '203.0.113.7' },
  'portal.signed_in': {
    customerId: exampleCustomer.id,
    sessionId: '0b9f7c2e-5a41-4f7e-9a0c-3d2b1e6f8a90',
    ip: '203.0.113.7',
  },
  /** `reason`: `wrong_code`, `no_code` (none asked, expired or used), `too_many_tries` (the code is dead) or `rate_limited`. */
  'portal.sign_in_failed': { customerId: null, reason: 'wrong_code', ip: '203.0.113.7' },
  'portal.signed_out': { customerId: exampleCustomer.id, sessionId: '0b9f7c2e-5a41-4f7e-9a0c-3d2b1e6f8a90' },
  /** The customer had the license key mailed to them again. */
  'portal.key_resent': { customerId: exampleCustomer.id, licenseId: exampleLicenseId },
  /** Never the signing secret. */
  'integration.created': exampleIntegrationResource(),
  'integration.updated': exampleIntegrationResource(),
  'integration.deleted': exampleIntegrationResource(),
  /**
   * Operators: the people who sign in to the dashboard. Each event's data is the operator as the API
   * answers it (never a password, TOTP seed, one-time link or session id). An account made with its
   * password: the first owner, through the setup link.
   */
  'operator.created': exampleOperator,
  /** An invitation was made; `mailed`: its link was also queued as a mail (mail configured). */
  'operator.invited': { ...exampleOperator, status: 'invited', mailed: true },
  /** The invited operator chose a password through the invitation link. */
  'operator.activated': exampleOperator,
  /** A role change; `previous` holds the fields as they were. */
  'operator.updated': { ...exampleOperator, role: 'admin', previous: { role: 'support' } },
  'operator.disabled': { ...exampleOperator, status: 'disabled' },
  'operator.enabled': exampleOperator,
  /**
   * A password-reset link was made, asked for by the operator (the sign-in page's "forgot password")
   * or made by an owner (the actor says which); `mailed`: also queued as a mail.
   */
  'operator.password_reset_requested': { ...exampleOperator, mailed: true },
  /** A new password through a reset link; every session of the operator ended. */
  'operator.password_changed': { ...exampleOperator, via: 'resetLink' },
  /**
   * Sessions ended: `signedOut` (the operator signed out), `revoked` (one session ended from the
   * session list), `revokedAll` (signed out everywhere) or `twoFactorRequired` (an owner required a
   * second factor the operator does not have). The actor says by whom.
   */
  'operator.session_ended': { ...exampleOperator, reason: 'revoked' },
  /** TOTP enrolment confirmed (recovery codes were made with it). */
  'operator.two_factor_enabled': exampleOperator,
  /** `by: "self"`: the operator turned it off with a code; `by: "owner"`: an owner reset it. */
  'operator.two_factor_disabled': { ...exampleOperator, by: 'self' },
  'operator.recovery_codes_regenerated': exampleOperator,
  /** A first single sign-on made the account (an allowed email domain, the configured role). */
  'operator.sso_account_created': { ...exampleOperator, role: 'viewer' },
  /**
   * An owner changed the operators' settings: `requireTwoFactor` (a second factor required of every
   * operator), with `previous`. `sessionsEnded`: sessions of operators without a second factor that
   * ended with it (each such operator also gets `operator.session_ended`, reason `twoFactorRequired`).
   */
  'operator_settings.updated': {
    requireTwoFactor: true,
    previous: { requireTwoFactor: false },
    sessionsEnded: 2,
  },
} as const satisfies Record<string, unknown>

export type EventType = keyof typeof eventTypeExamples
export const eventTypes = Object.keys(eventTypeExamples) as EventType[]
export const EventTypeSchema = Type.Enum(eventTypes)

export const EventIdSchema = Type.TemplateLiteral([Type.Literal('evt_'), Type.String()], {
  maxLength: 64,
  examples: ['evt_4Rk9xTq2LmNb7VcYp3HsWd'],
})
export type EventId = Static<typeof EventIdSchema>

/**
 * The parts of the server that change things on their own (`actor.type: "system"`): the expiry and
 * renewal notices, the sweep of lapsed floating seats, webhook delivery (an endpoint disabled after
 * days of failures), the customer portal's sign-in (before anyone is signed in), and `keyturn` for
 * changes whose part was not recorded.
 */
export const systemActorIds = [
  'expiry-notices',
  'seat-sweep',
  'webhook-deliveries',
  'portal',
  'keyturn',
] as const
export type SystemActorId = (typeof systemActorIds)[number]

/** The kinds of actor an event may name; a consumer must accept kinds added later. */
export const eventActorTypes = ['apiKey', 'operator', 'customer', 'integration', 'system'] as const

/**
 * Who made the change, as `{ type, id }`: an API key (with its role), an operator (a person signed in
 * to the dashboard), a customer in the customer portal, a payment-provider integration, or the server
 * itself. Names and emails are not copied into the log: they are read from the actor's id when shown.
 */
export const EventActorSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('apiKey'),
        id: ApiKeyIdSchema,
        role: Type.Enum(['admin', 'product', 'client'], { description: 'The API key’s role.' }),
      },
      { additionalProperties: false, description: 'An API key, in a request.' },
    ),
    Type.Object(
      {
        type: Type.Literal('operator'),
        id: Type.String({ maxLength: 64, examples: ['opr_3Hs8KqLx2VnRt5BcYw7mPd'] }),
      },
      { additionalProperties: false, description: 'An operator, signed in to the dashboard.' },
    ),
    Type.Object(
      { type: Type.Literal('customer'), id: CustomerIdSchema },
      { additionalProperties: false, description: 'A customer, signed in to the customer portal.' },
    ),
    Type.Object(
      {
        type: Type.Literal('integration'),
        id: Type.String({ maxLength: 64, examples: ['int_8sLq2NcVx5RtPm3KbY7wHe'] }),
      },
      {
        additionalProperties: false,
        description: 'A payment-provider integration, acting on a provider’s webhook.',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('system'),
        id: Type.Enum([...systemActorIds], { description: 'The part of the server that made the change.' }),
      },
      { additionalProperties: false, description: 'The server itself: a background job.' },
    ),
  ],
  { examples: [{ type: 'apiKey', id: 'key_5bVn8cXz2LkJh4GfDs6aQw', role: 'admin' }] },
)
export type EventActor = Static<typeof EventActorSchema>

export const EventResourceSchema = Type.Object(
  {
    id: EventIdSchema,
    object: Type.Literal('Event'),
    type: EventTypeSchema,
    occurredAt: TimestampSchema,
    productId: Type.Union([ProductIdSchema, Type.Null()], {
      description:
        'The product the changed object belongs to; null for global objects (admin keys, endpoints).',
    }),
    actor: EventActorSchema,
    requestId: Type.Union([Type.String({ maxLength: 64 }), Type.Null()], {
      description:
        'The `Request-Id` of the API request that made the change; null for the server’s own changes.',
    }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'The object as the API returned it after the change (for a deletion, as it was). Never a secret or a token.',
    }),
  },
  {
    additionalProperties: false,
    examples: Object.entries(eventTypeExamples).map(([type, data], index) => ({
      id: `evt_4Rk9xTq2LmNb7VcYp3Hs${String(index).padStart(2, '0')}`,
      object: 'Event',
      type,
      occurredAt: exampleTime,
      productId:
        type.startsWith('webhook_endpoint.') ||
        type.startsWith('api_key.') ||
        type.startsWith('portal.') ||
        type.startsWith('integration.')
          ? null
          : exampleProductId,
      actor:
        type === 'webhook_endpoint.disabled'
          ? { type: 'system', id: 'webhook-deliveries' }
          : type === 'license.expiring_soon' || type === 'license.expired'
            ? { type: 'system', id: 'expiry-notices' }
            : type === 'activation.expired'
              ? { type: 'system', id: 'seat-sweep' }
              : type === 'portal.sign_in_requested' || type === 'portal.sign_in_failed'
                ? { type: 'system', id: 'portal' }
                : type.startsWith('portal.')
                  ? { type: 'customer', id: exampleCustomer.id }
                  : { type: 'apiKey', id: 'key_5bVn8cXz2LkJh4GfDs6aQw', role: 'admin' },
      requestId: type === 'webhook_endpoint.disabled' ? null : 'req_6Gm2TqVx9LpRk4NcYb8WsH',
      data,
    })),
  },
)
export type EventResource = Static<typeof EventResourceSchema>

export const EventParamsSchema = Type.Object({ id: EventIdSchema }, { additionalProperties: false })

export const ListEventsQuerySchema = Type.Object({ ...listQueryProperties }, { additionalProperties: false })
export type ListEventsQuery = Static<typeof ListEventsQuerySchema>

export const EventListSchema = PaginatedSchema(EventResourceSchema)

export const eventSortFields = ['occurredAt'] as const
export const eventFilterFields = [
  'type',
  'productId',
  'licenseId',
  'occurredAt',
  'actor.type',
  'actor.id',
] as const

/** Whether a subscription (`license.revoked`, `license.*`, `*`) covers an event type. */
export function eventTypeMatches(pattern: string, type: string): boolean {
  if (pattern === '*') {
    return true
  }
  if (pattern.endsWith('.*')) {
    return type.startsWith(pattern.slice(0, -1))
  }
  return pattern === type
}
