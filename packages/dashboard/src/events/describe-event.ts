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
}

/** Words for the past tenses whose plain reading would mislead. */
const verbs: Readonly<Record<string, string>> = {
  'activation.created': 'activated',
  'activation.deleted': 'deactivated',
  'activation.expired': 'lapsed (no heartbeat)',
  'license.expiration_started': 'started its expiry (first activation)',
  'license.expiring_soon': 'expires soon',
  'license.payment_overdue': 'payment overdue (grace started)',
  'license.payment_restored': 'payment restored',
  'license.validation_failed': 'failed validation',
  'license.usage_incremented': 'usage recorded',
  'license.usage_reset': 'usage reset',
  'product.key_rotated': 'signing key rotated',
  'webhook_endpoint.test': 'sent a test event',
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
      return '/operators'
    default:
      return undefined
  }
}

/** "License 7K3QD-… revoked", "Machine Ada's laptop activated", "Customer ada@example.com created". */
export function describeEvent(event: DescribableEvent): EventDescription {
  const [kind = event.type, action = ''] = event.type.split(/\.(.*)/s)
  const noun = nouns[kind] ?? kind.replaceAll('_', ' ')
  const name = nameOf(kind, event.data)
  let verb = operatorVerb(event) ?? verbs[event.type] ?? action.replaceAll('_', ' ')
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
 * Who did it: an API key with its role, an operator, a portal customer, a payment-provider
 * integration, or Keyturn itself (with the part that acted); a kind this dashboard does not know is
 * said by its type and id.
 */
export function describeActor(actor: object, operatorNames?: ReadonlyMap<string, string>): string {
  const fields = actor as Record<string, unknown>
  const id = typeof fields.id === 'string' ? fields.id : ''
  switch (fields.type) {
    case 'operator': {
      const name = operatorNames?.get(id)
      return name === undefined ? `operator ${id}` : name
    }
    case 'system':
      return id === '' ? 'Keyturn' : `Keyturn (${id.replaceAll('-', ' ')})`
    case 'apiKey':
      return `${typeof fields.role === 'string' ? `${fields.role} ` : ''}key ${id}`
    case undefined:
      return 'unknown'
    default:
      return `${String(fields.type)} ${id}`.trim()
  }
}
