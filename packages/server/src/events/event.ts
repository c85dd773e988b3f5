import type { ApiKeyId, ApiKeyRole, EventId, EventType, ProductId } from '@keyturn/protocol'

export type Actor = { readonly apiKeyId: ApiKeyId; readonly role: ApiKeyRole } | { readonly system: true }

/**
 * The license an event is about, for `GET /events?filter=licenseId:eq:…`: a license event's own id,
 * a validation's license, an activation's license; null for every other event (migration 81 reads
 * stored events the same way).
 */
export function licenseIdOf(type: EventType, data: Readonly<Record<string, unknown>>): string | null {
  if (type === 'license.validated' || type === 'license.validation_failed') {
    const license = data.license
    return typeof license === 'object' && license !== null && 'id' in license ? textOrNull(license.id) : null
  }
  if (type.startsWith('license.')) {
    return textOrNull(data.id)
  }
  return type.startsWith('activation.') ? textOrNull(data.licenseId) : null
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null
}

/** One recorded state change (the audit log's entry and the payload of webhook deliveries). */
export interface Event {
  readonly id: EventId
  readonly type: EventType
  readonly occurredAt: Date
  readonly productId: ProductId | null
  readonly actor: Actor
  readonly requestId: string | null
  /** The resource as the API returned it after the change; already in wire form. */
  readonly data: Record<string, unknown>
}
