/**
 * @keyturn/client: the typed online API client and offline license-token validation. Uses only
 * web-standard globals (fetch, WebCrypto via jose): runs in Node >= 22, browsers, Deno and Bun.
 */
export type {
  ActivationId,
  ActivationResource,
  ApiKeyId,
  ApiKeyResource,
  CreatedApiKeyResource,
  CustomerId,
  CustomerResource,
  EntitlementId,
  EntitlementResource,
  EventId,
  EventResource,
  EventType,
  ImportLicensesResult,
  ImportRowResult,
  IntegrationEventResource,
  IntegrationResource,
  LicenseId,
  LicenseResource,
  LicenseTokenResource,
  OperatorResource,
  OperatorRoleName,
  OperatorSession,
  Paginated,
  PolicyId,
  PolicyResource,
  Problem,
  ProductId,
  ProductKeyResource,
  ProductResource,
  ProviderLinkResource,
  SearchHit,
  SearchResult,
  Stats,
  StatsCounts,
  StatsDay,
  StatsFailures,
  StatsFailuresQuery,
  StatsQuery,
  ValidationResult,
  WebhookDeliveryId,
  WebhookDeliveryResource,
  WebhookEndpointId,
  WebhookEndpointResource,
  WebhookEndpointWithSecretResource,
} from '../../protocol/src/index.js'
/** A plain date typed for an expiration (`2031-01-01`) as the instant it means: the end of that day in UTC. */
/** Every event type the API records and sends to webhooks (a webhook may also carry newer ones). */
export { endOfDayUtc, eventTypes } from '../../protocol/src/index.js'
export { InvalidOptionError, maxClockToleranceSeconds } from './clock.js'
export {
  KeyturnApiError,
  KeyturnConnectionError,
  KeyturnSignatureError,
  type KeyturnSignatureErrorCode,
  LicenseFileError,
  type LicenseFileErrorCode,
  LicenseTokenError,
  type LicenseTokenErrorCode,
} from './errors.js'
export {
  createLicenseGuard,
  defaultGuardClockTolerance,
  defaultGuardGracePeriod,
  type LicenseGuard,
  type LicenseGuardClient,
  type LicenseGuardOptions,
  maxGuardGracePeriod,
} from './guard/license-guard.js'
export { localStorageGuardStorage, type WebStorageLike } from './guard/local-storage.js'
export type {
  LicenseGuardGraceReason,
  LicenseGuardInvalidReason,
  LicenseGuardReason,
  LicenseGuardResult,
  LicenseGuardState,
  LicenseGuardStateChange,
  LicenseGuardStorage,
  LicenseGuardValidReason,
} from './guard/types.js'
export {
  defaultHeartbeatIntervalMs,
  type Heartbeats,
  type HeartbeatTimers,
  type StartHeartbeatsOptions,
} from './heartbeats.js'
export type { KeyturnId, Loose } from './ids.js'
export {
  defaultMaxRetries,
  defaultTimeoutMs,
  KeyturnClient,
  type KeyturnClientOptions,
  type ProofOptions,
  type RequestOptions,
  type ValidationWithProof,
} from './keyturn-client.js'
export {
  type CreateActivationRequestOptions,
  type CreateDeactivationCodeOptions,
  createActivationRequest,
  createDeactivationCode,
} from './offline-activation.js'
export {
  maxLicenseTokenLength,
  type OfflineValidationResult,
  type PublicKeyInput,
  type ValidateLicenseTokenOptions,
  validateLicenseToken,
} from './validate-license-token.js'
export {
  type LicenseFileResult,
  type VerifyLicenseFileOptions,
  verifyLicenseFile,
} from './verify-license-file.js'
export {
  type VerifyWebhookOptions,
  verifyWebhook,
  WebhookSignatureError,
  type WebhookSignatureErrorCode,
  webhookToleranceSeconds,
} from './verify-webhook.js'
