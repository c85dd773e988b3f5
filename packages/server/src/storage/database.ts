import type {
  ActivationId,
  ApiKeyId,
  ApiKeyRole,
  CustomerId,
  EntitlementId,
  EventActor,
  LicenseId,
  PolicyId,
  ProductId,
} from '@keyturn/protocol'
import type { ColumnType, Generated } from 'kysely'

// Written as ISO-8601 strings (SQLite TEXT, PostgreSQL timestamptz); read back as a string (SQLite)
// or a Date (pg), so row mappers call new Date(x).
export type Timestamp = ColumnType<Date | string, string, string>

export interface ProductsTable {
  id: ProductId
  name: string
  suspended_at: Timestamp | null
  /** Seconds; the longest token a client key obtains. */
  client_token_ttl: number
  /** 0 or 1 (2026-11-23-70-product-sign-responses). */
  sign_responses: ColumnType<number, number | undefined, number>
  /** ProductBranding as JSON; null in rows written before branding existed. */
  branding: string | null
  metadata: JsonObject
  created_at: Timestamp
  updated_at: Timestamp
}

/** A product's Ed25519 signing keys; the newest is current, older ones verify earlier tokens. */
export interface ProductKeysTable {
  /** The RFC 7638 JWK thumbprint: the `kid` of tokens. */
  id: string
  product_id: ProductId
  public_key_pem: string
  /** AES-256-GCM: base64url of iv (12) || tag (16) || ciphertext of the PKCS#8 DER private key. */
  private_key_encrypted: string
  created_at: Timestamp
  /** null: the product's current key. */
  retired_at: Timestamp | null
}

export interface LicensesTable {
  id: LicenseId
  product_id: ProductId
  key: string
  max_activations: number | null
  expiration_date: Timestamp | null
  revoked_at: Timestamp | null
  /** Kept equal to the number of activation rows, in the same transactions (2026-11-21-01-activations). */
  activation_count: Generated<number>
  /** Seconds an activation holds its seat after a heartbeat; null: activations never lapse (2026-11-23-60). */
  heartbeat_ttl: number | null
  /** bigint in PostgreSQL (read back as a string): the store converts with Number(). */
  max_uses: number | string | null
  uses: ColumnType<number | string, number | undefined, number>
  uses_reset_at: Timestamp | null
  customer_id: CustomerId | null
  policy_id: PolicyId | null
  metadata: JsonObject
  /** Seconds the first activation adds to its time to make `expiration_date`; null once it happened. */
  first_activation_duration: number | null
  /** When the payment grace a failed provider payment began ends; null: no payment overdue (2026-11-30-51). */
  payment_grace_ends_at: ColumnType<Date | string | null, string | null | undefined, string | null>
  /** Its id in the system it was imported from, unique per product (2026-11-30-60); null: none. */
  external_id: string | null
  created_at: Timestamp
  updated_at: Timestamp
  /** base64url of SHA-256(key)[0..12]: how an offline activation request names its license (2026-11-30-10). */
  key_hint: string | null
}

export interface CustomersTable {
  id: CustomerId
  email: string
  email_lower: string
  name: string | null
  metadata: JsonObject
  /** 0 or 1 (2026-11-28-80-mail-outbox): no non-essential mail. */
  mail_opt_out: ColumnType<number, number | undefined, number>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface EntitlementsTable {
  id: EntitlementId
  product_id: ProductId
  code: string
  name: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface PoliciesTable {
  id: PolicyId
  product_id: ProductId
  name: string
  max_activations: number | null
  duration: number | null
  expiration_basis: 'creation' | 'firstActivation'
  heartbeat_ttl: number | null
  /** bigint in PostgreSQL (read back as a string). */
  max_uses: number | string | null
  metadata: JsonObject
  created_at: Timestamp
  updated_at: Timestamp
  /** Migration 2026-11-29-10: seconds (bigint in PostgreSQL, read back as a string); null: files never expire. */
  license_file_ttl: number | string | null
  token_ttl_max: number | string | null
  /** 0 or 1. */
  license_file_metadata: number
  /** 0 or 1 (2026-11-30-52): a provider sale of quantity N gets N × max_activations. */
  seats_per_quantity: ColumnType<number, number | undefined, number>
  /** Migration 2026-11-29-42-portal: portal deactivations per `transfer_period` seconds; null: unlimited. */
  max_transfers: number | null
  transfer_period: number
  /** Migration 2026-11-30-20: seconds (bigint in PostgreSQL, read back as a string); null: no check-in. */
  check_in_interval: number | string | null
  /** Seconds after the check-in deadline; null: the application's own setting. */
  grace_period: number | string | null
}

export interface PolicyEntitlementsTable {
  policy_id: PolicyId
  entitlement_id: EntitlementId
}

export interface LicenseEntitlementsTable {
  license_id: LicenseId
  entitlement_id: EntitlementId
}

/**
 * Licenses per product, expiration day and revoked or not, kept by triggers (migration 90); read by
 * lists (licenses/kysely-license-counts.ts). Written only by the triggers.
 */
export interface LicenseCountsTable {
  product_id: ProductId
  /** The UTC day (YYYY-MM-DD) of `coalesce(expiration_date, <never-expires bound>)`. */
  expires_on: string
  revoked: 0 | 1
  stripe: number
  /** pg returns bigint as a string. */
  licenses: number | string
}

/**
 * SQLite only: each license's metadata entries, kept by triggers (migration 2026-11-27-00); read by
 * `filter=metadata.<key>:eq:<value>` (licenses/kysely-license-store.ts). Written only by the triggers.
 */
export interface LicenseMetadataTable {
  license_id: LicenseId
  key: string
  /** JSON's type: text, integer, real, true or false. */
  type: string
  /** As JSON has it (booleans as 1 and 0). */
  value: string | number
}

/** JSON: text in SQLite, jsonb in PostgreSQL (which hands back parsed values). */
export type Json = ColumnType<unknown, string, string>
/** A JSON object column with a database default (`{}`): optional on insert. */
export type JsonObject = ColumnType<unknown, string | undefined, string>

export interface ActivationsTable {
  id: ActivationId
  license_id: LicenseId
  product_id: ProductId
  fingerprint: string
  name: string | null
  metadata: Json | null
  created_at: Timestamp
  last_seen_at: Timestamp
  /** Null only in rows written before 2026-11-23-60 backfilled it; always written since. */
  last_heartbeat_at: Timestamp | null
  /** last_heartbeat_at + the license's heartbeat TTL; null: never lapses. */
  expires_at: Timestamp | null
}

export interface ApiKeysTable {
  id: ApiKeyId
  name: string
  role: ApiKeyRole
  product_id: ProductId | null
  /** Hex HMAC-SHA256 of the secret under a key derived from KEYTURN_SECRET; the secret is never stored. */
  digest: string
  prefix: string
  created_at: Timestamp
}

/** The audit log and webhook outbox (migration 2026-11-23-40-events). */
export interface EventsTable {
  id: string
  type: string
  occurred_at: Timestamp
  product_id: ProductId | null
  /** Who made the change: `{ type, id }` (protocol's EventActor); the role for an API key only. */
  actor_type: EventActor['type']
  actor_id: string
  actor_role: ApiKeyRole | null
  request_id: string | null
  data: Json
  /** The license the event is about (storage/event-writer.ts licenseIdOf); null for other events. */
  license_id: LicenseId | null
  /** Set once the delivery worker has created the event's webhook deliveries. */
  dispatched_at: Timestamp | null
}

export interface WebhookEndpointsTable {
  id: string
  url: string
  description: string | null
  /** JSON array of event type patterns. */
  event_types: Json
  product_id: ProductId | null
  /** AES-256-GCM: base64url of iv || tag || ciphertext of the `whsec_…` secret. */
  secret_encrypted: string
  disabled_at: Timestamp | null
  failing_since: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface WebhookDeliveriesTable {
  id: string
  endpoint_id: string
  event_id: string
  event_type: string
  product_id: ProductId | null
  status: 'pending' | 'delivered' | 'failed'
  attempts: Generated<number>
  next_attempt_at: Timestamp | null
  lease_id: string | null
  lease_until: Timestamp | null
  last_attempt_at: Timestamp | null
  last_response_status: number | null
  last_response_body: string | null
  last_error: string | null
  delivered_at: Timestamp | null
  created_at: Timestamp
}

/** One row, `id = 'master'`: the master secret's check value (storage/secret-check.ts). */
export interface SecretCheckTable {
  id: string
  value: string
}

/** The mail outbox and delivery log (mail/): the payload is encrypted and purged once settled. */
export interface MailOutboxTable {
  id: string
  template: string
  product_id: string | null
  customer_id: string | null
  payload_encrypted: string | null
  status: 'pending' | 'sent' | 'failed'
  attempts: Generated<number>
  next_attempt_at: Timestamp | null
  lease_id: string | null
  lease_until: Timestamp | null
  last_attempt_at: Timestamp | null
  last_error: string | null
  sent_at: Timestamp | null
  created_at: Timestamp
}

/** How far the expiry-notice job has read, per notice day (expiry-notices/). */
export interface ExpiryNoticeCursorsTable {
  days: number
  through: Timestamp
  through_id: string
}

/** Per product and UTC day (`YYYY-MM-DD`); bigint in PostgreSQL, read back as strings. */
export interface DailyStatsTable {
  product_id: ProductId
  day: string
  validations_valid: number | string
  validations_invalid: number | string
  activations: number | string
  deactivations: number | string
  licenses_created: number | string
  licenses_renewed: number | string
  licenses_revoked: number | string
  licenses_sold: number | string
  provider_renewals: number | string
  payment_failures: number | string
  refund_revocations: number | string
}

/** Payment-provider integrations (migration 2026-11-30-50-integrations). */
export interface IntegrationsTable {
  id: string
  provider: string
  description: string | null
  /** AES-256-GCM: base64url of iv || tag || ciphertext of the provider's signing secret. */
  signing_secret_encrypted: string
  /** JSON array of `{ providerItemId, productId, policyId }`. */
  mappings: Json
  on_refund: string
  payment_grace_days: number
  created_at: Timestamp
  updated_at: Timestamp
}

/** A provider object (customer, subscription, order, transaction) linked to Keyturn's customer or license. */
export interface IntegrationLinksTable {
  integration_id: string
  object_kind: string
  object_id: string
  customer_id: CustomerId | null
  license_id: LicenseId | null
  created_at: Timestamp
}

/** Provider events received, one per (integration, dedupe key), with what each did or why not. */
export interface IntegrationEventsTable {
  integration_id: string
  dedupe_key: string
  event_type: string
  /** `processed`, `ignored`, `pending` (waiting for an earlier event; retried), `failed`. */
  status: string
  outcome: string
  /** The parsed body while the event is pending; null once handled. */
  payload: Json | null
  attempts: Generated<number>
  next_attempt_at: Timestamp | null
  received_at: Timestamp
  updated_at: Timestamp
}

/** The activation an offline request (license, nonce) made, and when it was first answered (2026-11-30-10). */
export interface OfflineRequestsTable {
  license_id: LicenseId
  nonce: string
  activation_id: ActivationId
  issued_at: Timestamp
}

/** Wrong offline deactivation codes in a row for an activation, and the lock they set (2026-11-30-10). */
export interface OfflineDeactivationLocksTable {
  activation_id: ActivationId
  failures: number
  locked_until: Timestamp | null
}

export interface Database {
  products: ProductsTable
  product_keys: ProductKeysTable
  licenses: LicensesTable
  api_keys: ApiKeysTable
  activations: ActivationsTable
  events: EventsTable
  customers: CustomersTable
  entitlements: EntitlementsTable
  policies: PoliciesTable
  policy_entitlements: PolicyEntitlementsTable
  license_entitlements: LicenseEntitlementsTable
  license_counts: LicenseCountsTable
  license_metadata: LicenseMetadataTable
  webhook_endpoints: WebhookEndpointsTable
  webhook_deliveries: WebhookDeliveriesTable
  secret_check: SecretCheckTable
  mail_outbox: MailOutboxTable
  expiry_notice_cursors: ExpiryNoticeCursorsTable
  daily_stats: DailyStatsTable
  integrations: IntegrationsTable
  integration_links: IntegrationLinksTable
  integration_events: IntegrationEventsTable
  offline_requests: OfflineRequestsTable
  offline_deactivation_locks: OfflineDeactivationLocksTable
}

export type DatabaseKind = 'sqlite' | 'postgres'

/** Both drivers hand timestamps back differently; this is the one place that evens it out. */
export function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value)
}

export function toNullableDate(value: Date | string | null): Date | null {
  return value === null ? null : toDate(value)
}
