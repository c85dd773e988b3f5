import type {
  ActivationId,
  ApiKeyId,
  CustomerId,
  EntitlementId,
  EventId,
  LicenseId,
  PolicyId,
  ProductId,
  WebhookDeliveryId,
  WebhookEndpointId,
} from '../../protocol/src/index.js'

/** Every id type of the API: its prefix and a tail (`lic_7fQx2mNc4RtYp9LkWv3bHs`). Results carry these. */
export type KeyturnId =
  | ActivationId
  | ApiKeyId
  | CustomerId
  | EntitlementId
  | EventId
  | LicenseId
  | PolicyId
  | ProductId
  | WebhookDeliveryId
  | WebhookEndpointId

/**
 * A request type as the client's methods accept it: every id may be a plain `string` (an id read
 * from a database, a form or an environment variable is one), everything else keeps its type. The
 * server refuses an id of the wrong kind (`400 validation_failed` naming the field, or `404`).
 */
export type Loose<T> = T extends KeyturnId
  ? string
  : T extends readonly (infer Item)[]
    ? readonly Loose<Item>[]
    : T extends object
      ? { [K in keyof T]: Loose<T[K]> }
      : T
