import type { ApiKeyId, ApiKeyRole, EventId, EventType, ProductId } from '@keyturn/protocol'

export type Actor = { readonly apiKeyId: ApiKeyId; readonly role: ApiKeyRole } | { readonly system: true }

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
