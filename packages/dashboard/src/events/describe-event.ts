/**
 * @module Events said as a person would: "License 7K3QD-… revoked", "Machine Ada's laptop activated",
 * with where the object is shown in the dashboard. It reads the event's `data` defensively: an event
 * type or actor this dashboard does not know yet is still said, from its type's words.
 */

/** What the table needs of an event (the API's EventResource, loosely). */
export interface DescribableEvent {
  readonly type: string
  readonly productId: string | null
  readonly actor: object
  readonly data: Readonly<Record<string, unknown>>
}

export interface EventDescription {
  /** One sentence: what happened to which object. */
  readonly text: string
  /** The dashboard page of the object, when it has one. */
  readonly link?: string
}

const nouns: Readonly<Record<string, string>> = {
  license: 'License',
  activation: 'Machine',
  customer: 'Customer',
  entitlement: 'Entitlement',
  policy: 'Policy',
  product: 'Product',
  api_key: 'API key',
  webhook_endpoint: 'Webhook endpoint',
  operator: 'Operator',
  integration: 'Integration',
  operator_settings: 'Operator settings',
}

/** Payment providers by their API name. */
const providers: Readonly<Record<string, string>> = {
  stripe: 'Stripe',
  paddle: 'Paddle',
  lemonsqueezy: 'Lemon Squeezy',
}

/** Why a portal sign-in failed, in words. */
const signInFailures: Readonly<Record<string, string>> = {
  wrong_code: 'a wrong code',
  no_code: 'no code asked, or it expired',
  too_many_tries: 'too many tries',
  rate_limited: 'too many attempts',
}

/** Words for the past tenses whose plain reading would mislead. */
const verbs: Readonly<Record<string, string>> = {
  'activation.created': 'activated',
  'activation.deleted': 'deactivated',
  'activation.expired': 'lapsed (no heartbeat)',
  'license.expiration_started': 'started its expiry (first activation)',
  'license.expiring_soon': 'expires soon',
  'license.file_issued': 'license file issued',
  'license.policy_changed': 'moved to another policy',
  'license.payment_overdue': 'payment overdue (grace started)',
  'license.payment_restored': 'payment restored',
  'license.validation_failed': 'failed validation',
  'license.usage_incremented': 'usage recorded',
  'license.usage_reset': 'usage reset',
  'product.key_rotated': 'signing key rotated',
  'webhook_endpoint.test': 'sent a test event',
  'webhook_endpoint.disabled': 'disabled (its deliveries kept failing)',
  'operator.activated': 'accepted the invitation',
  'operator.password_reset_requested': 'was given a password-reset link',
  'operator.password_changed': 'set a new password (reset link)',
  'operator.two_factor_enabled': 'turned on two-factor authentication',
  'operator.two_factor_disabled': 'turned off two-factor authentication',
  'operator.recovery_codes_regenerated': 'made new recovery codes',
  'operator.sso_account_created': 'signed on for the first time (account made by single sign-on)',
}

/** How an operator's sessions ended, by the event's `reason`. */
const sessionEndings: Readonly<Record<string, string>> = {
  signedOut: 'signed out',
  revoked: 'was signed out of one browser',
  revokedAll: 'was signed out everywhere',
  twoFactorRequired: 'was signed out (two-factor authentication became required)',
}

/** The verb of an operator event that its data words better than its type. */
function operatorVerb(event: DescribableEvent): string | undefined {
  const { data } = event
  const previous = (data.previous ?? {}) as Record<string, unknown>
  if (
    event.type === 'operator.updated' &&
    text(previous.role) !== undefined &&
    text(data.role) !== undefined
  ) {
    return `changed role from ${text(previous.role)} to ${text(data.role)}`
  }
  if (event.type === 'operator.session_ended') {
    return sessionEndings[text(data.reason) ?? ''] ?? 'session ended'
  }
  if (event.type === 'operator.two_factor_disabled' && data.by === 'owner') {
    return 'had two-factor authentication reset by an owner'
  }
  if (event.type === 'operator.invited' && typeof data.role === 'string') {
    return `invited as ${data.role}${data.mailed === true ? ' (mailed)' : ''}`
  }
  return undefined
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 ? value : undefined

/** A license key shortened to its first group: enough to recognise, not to copy from a screen. */
function shortKey(key: string | undefined): string | undefined {
  if (key === undefined) {
    return undefined
  }
  const first = key.split('-')[0] ?? key
  return first.length < key.length ? `${first}-…` : key
}

/** How the changed object is named: its key, name, email, code or URL; else its id. */
function nameOf(kind: string, data: Readonly<Record<string, unknown>>): string | undefined {
  const nested = (data.license ?? {}) as Record<string, unknown>
  switch (kind) {
    case 'license':
      return shortKey(text(data.key) ?? text(nested.key)) ?? text(data.id) ?? text(nested.id)
    case 'activation':
      return text(data.name) ?? text(data.fingerprint)?.slice(0, 12) ?? text(data.id)
    case 'customer':
    case 'operator':
      return text(data.email) ?? text(data.id)
    case 'entitlement':
      return text(data.code) ?? text(data.id)
    case 'webhook_endpoint':
      return text(data.url) ?? text(data.id)
    case 'integration': {
      const provider = text(data.provider)
      return provider === undefined ? text(data.id) : (providers[provider] ?? provider)
    }
    default:
      return text(data.name) ?? text(data.id)
  }
}

function linkOf(kind: string, event: DescribableEvent): string | undefined {
  const { data } = event
  const nested = (data.license ?? {}) as Record<string, unknown>
  const id = text(data.id)
  switch (kind) {
    case 'license': {
      const licenseId = id ?? text(nested.id)
      return licenseId === undefined ? undefined : `/licenses/${licenseId}`
    }
    case 'activation': {
      const licenseId = text(data.licenseId)
      return licenseId === undefined ? undefined : `/licenses/${licenseId}`
    }
    case 'customer':
    case 'entitlement':
    case 'policy':
      return id === undefined || event.type.endsWith('.deleted')
        ? undefined
        : `/${kind === 'policy' ? 'policies' : `${kind}s`}/${id}`
    case 'product': {
      const productId = id ?? event.productId ?? undefined
      return productId === undefined ? undefined : `/products/${productId}`
    }
    case 'webhook_endpoint':
      return id === undefined || event.type.endsWith('.deleted') ? undefined : `/webhooks/${id}`
    case 'operator':
    case 'operator_settings':
      return '/operators'
    case 'integration':
      return id === undefined || event.type.endsWith('.deleted') ? undefined : `/integrations/${id}`
    case 'api_key':
      return '/api-keys'
    default:
      return undefined
  }
}

/**
 * The customer portal's events name the customer by id (null: an address that is no customer's):
 * "Customer ada@example.com signed in to the portal", with the customer's page.
 */
function describePortalEvent(event: DescribableEvent, names: ActorNames | undefined): EventDescription {
  const customerId = text(event.data.customerId)
  const who =
    customerId === undefined ? 'Someone' : `Customer ${names?.customers?.get(customerId) ?? customerId}`
  const link = customerId === undefined ? undefined : `/customers/${customerId}`
  const withLink = (sentence: string): EventDescription =>
    link === undefined ? { text: sentence } : { text: sentence, link }
  switch (event.type) {
    case 'portal.sign_in_requested':
      return withLink(
        customerId === undefined
          ? 'Someone asked for a portal sign-in code for an address that is no customer’s (no mail sent)'
          : `${who} asked for a portal sign-in code${event.data.via === 'portalLink' ? ' (a portal link was sent)' : ''}`,
      )
    case 'portal.signed_in':
      return withLink(`${who} signed in to the portal`)
    case 'portal.signed_out':
      return withLink(`${who} signed out of the portal`)
    case 'portal.sign_in_failed': {
      const reason = text(event.data.reason)
      return withLink(
        `${who} failed to sign in to the portal${reason === undefined ? '' : ` (${signInFailures[reason] ?? reason.replaceAll('_', ' ')})`}`,
      )
    }
    case 'portal.key_resent':
      return withLink(`${who} had the license key mailed again from the portal`)
    default:
      return withLink(`${who}: portal ${event.type.slice('portal.'.length).replaceAll('_', ' ')}`)
  }
}

/** "License 7K3QD-… revoked", "Machine Ada's laptop activated", "Customer ada@example.com created". */
export function describeEvent(event: DescribableEvent, names?: ActorNames): EventDescription {
  const [kind = event.type, action = ''] = event.type.split(/\.(.*)/s)
  if (kind === 'portal') {
    return describePortalEvent(event, names)
  }
  const noun = nouns[kind] ?? kind.replaceAll('_', ' ')
  const name = nameOf(kind, event.data)
  let verb = operatorVerb(event) ?? verbs[event.type] ?? action.replaceAll('_', ' ')
  if (event.type === 'operator_settings.updated' && typeof event.data.requireTwoFactor === 'boolean') {
    verb = event.data.requireTwoFactor
      ? `changed: two-factor authentication required of everyone${typeof event.data.sessionsEnded === 'number' && event.data.sessionsEnded > 0 ? ` (${event.data.sessionsEnded} sessions ended)` : ''}`
      : 'changed: two-factor authentication no longer required'
  }
  if (event.type === 'license.expiring_soon' && typeof event.data.expiresInDays === 'number') {
    verb = `expires in ${event.data.expiresInDays} days`
  }
  const link = linkOf(kind, event)
  return {
    text: `${noun}${name === undefined ? '' : ` ${name}`} ${verb}`,
    ...(link === undefined ? {} : { link }),
  }
}

/**
 * What the dashboard could read about the actors an event names by id (events store no names or
 * emails): operators as "Name <email>", API keys by their name, integrations by their provider,
 * customers by their email. A missing entry (not readable, or deleted since) is said by its id.
 */
export interface ActorNames {
  readonly operators?: ReadonlyMap<string, string>
  readonly apiKeys?: ReadonlyMap<string, string>
  readonly integrations?: ReadonlyMap<string, string>
  readonly customers?: ReadonlyMap<string, string>
}

/** The provider's name of an integration, for `ActorNames.integrations`. */
export function providerName(provider: string): string {
  return providers[provider] ?? provider
}

/**
 * Who did it: an API key with its role, an operator, a portal customer, a payment-provider
 * integration, or Keyturn itself (with the part that acted); a kind this dashboard does not know is
 * said by its type and id.
 */
export function describeActor(actor: object, names?: ActorNames): string {
  const fields = actor as Record<string, unknown>
  const id = typeof fields.id === 'string' ? fields.id : ''
  switch (fields.type) {
    case 'operator': {
      const name = names?.operators?.get(id)
      return name === undefined ? `operator ${id}` : name
    }
    case 'system':
      return id === '' ? 'Keyturn' : `Keyturn (${id.replaceAll('-', ' ')})`
    case 'apiKey': {
      const role = typeof fields.role === 'string' ? `${fields.role} ` : ''
      const name = names?.apiKeys?.get(id)
      return name === undefined ? `${role}key ${id}` : `${role}key “${name}”`
    }
    case 'integration': {
      const provider = names?.integrations?.get(id)
      return provider === undefined ? `integration ${id}` : `${provider} integration`
    }
    case 'customer': {
      const email = names?.customers?.get(id)
      return email === undefined ? `customer ${id}` : `customer ${email}`
    }
    case undefined:
      return 'unknown'
    default:
      return `${String(fields.type)} ${id}`.trim()
  }
}

/** The dashboard page of an actor, where it has one (integrations' pages are for admins only). */
export function actorLink(actor: object, seesIntegrations: boolean): string | undefined {
  const fields = actor as Record<string, unknown>
  const id = typeof fields.id === 'string' ? fields.id : ''
  switch (fields.type) {
    case 'integration':
      return id === '' || !seesIntegrations ? undefined : `/integrations/${id}`
    case 'customer':
      return id === '' ? undefined : `/customers/${id}`
    case 'apiKey':
      return '/api-keys'
    default:
      return undefined
  }
}
