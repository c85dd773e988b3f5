import { type Static, Type } from 'typebox'

/** Every code the API returns. Public contract: never renamed or reused (docs/errors.md). */
export const ErrorCodeSchema = Type.Enum([
  'bad_request',
  'validation_failed',
  'invalid_filter',
  'unsupported_media_type',
  'payload_too_large',
  'headers_too_large',
  'request_timeout',
  'expectation_failed',
  'unauthenticated',
  'forbidden',
  'route_not_found',
  'method_not_allowed',
  'license_not_found',
  'product_not_found',
  'api_key_not_found',
  'activation_not_found',
  'event_not_found',
  'webhook_endpoint_not_found',
  'webhook_delivery_not_found',
  'integration_not_found',
  'provider_signature_invalid',
  'customer_not_found',
  'policy_not_found',
  'entitlement_not_found',
  'license_not_active',
  'product_suspended',
  'activation_limit_reached',
  'usage_limit_reached',
  'customer_has_licenses',
  'customer_email_taken',
  'policy_in_use',
  'entitlement_code_taken',
  'license_does_not_expire',
  'license_key_taken',
  'external_id_taken',
  'idempotency_key_in_progress',
  'idempotency_key_reused',
  'idempotency_key_unrecoverable',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'database_unavailable',
  'storage_full',
  'portal_unavailable',
  'operator_not_found',
  'operator_email_taken',
  'operator_session_not_found',
  'activation_request_invalid',
  'license_floating',
  'deactivation_code_invalid',
  'deactivation_locked',
  'two_factor_enrolled',
  'two_factor_not_enrolled',
  'sso_refused',
])
export type ErrorCode = Static<typeof ErrorCodeSchema>

/**
 * Written only here. Relative, resolved against the server's own URL (RFC 9457 §3.1.1): Keyturn
 * serves a page for each at `GET /problems/<code>` (docs/decisions/0010-http-api-conventions.md). Clients switch on `code`.
 */
export const problemType = (code: ErrorCode): string => `/problems/${code}`

export type ErrorStatus =
  | 400
  | 401
  | 403
  | 404
  | 405
  | 408
  | 409
  | 413
  | 415
  | 417
  | 422
  | 429
  | 431
  | 500
  | 503

export interface ErrorDescription {
  readonly status: ErrorStatus
  /** The problem's `title`: fixed per code (RFC 9457). */
  readonly title: string
  /** When the code is given (Markdown: `code` spans only). */
  readonly meaning: string
  /** What a client should do about it (Markdown: `code` spans only). */
  readonly action: string
}

/**
 * The one error catalogue: each code's status, title, meaning and the action it asks of a client.
 * The server's problems, the OpenAPI document, the pages at `/problems/<code>` and the table in
 * docs/errors.md (`npm run openapi` rewrites it) all come from here; a code without an entry does
 * not compile.
 */
export const errorCatalogue: Readonly<Record<ErrorCode, ErrorDescription>> = {
  bad_request: {
    status: 400,
    title: 'The request could not be read',
    meaning:
      'The request could not be read: malformed JSON or a body that is not UTF-8, or a broken header; or the HTTP parser refused it (an unknown method such as `FROB`, a NUL byte in the path, `Content-Length` together with `Transfer-Encoding`, an HTTP/1.1 request without `Host`, `CONNECT`), in which case the connection closes after the answer; or it has two `Host`, `Authorization` or `Content-Type` headers; or it carries both an API key and the operator session cookie; or a signed-in operator’s request carries an `Idempotency-Key` (kept per API key). (A POST or PATCH without a body reads as `{}`, whatever its `Content-Type`.)',
    action: 'Fix the request; do not retry it unchanged.',
  },
  validation_failed: {
    status: 400,
    title: 'The request is not valid',
    meaning:
      "The request does not match the operation's schema: a missing or unknown field (unknown fields are rejected, not ignored), a wrong type, a value out of bounds (`limit` outside 1–100, `maxActivations` < 1, an `expirationDate` not in the future, a `customPayload` over 4 KiB, a product `name` that is blank), a `sort` that is not `field:asc` or `field:desc` on a sortable field, or `page` together with `starting_after`; a body that nests objects and arrays more than 32 levels deep (`pointer` `#`); text anywhere (body, query, headers) holding U+0000 or an unpaired surrogate; a number that is not finite (`page=Infinity`, `limit=1e309`, `1e309` in a JSON body), or a number in the query not written in decimal digits (`limit=0x10`, `page=1e3`). `errors[]` names each field.",
    action: 'Fix the fields listed in `errors[]`; do not retry unchanged.',
  },
  invalid_filter: {
    status: 400,
    title: 'The filter is not valid',
    meaning:
      'A `filter` rule of a list request is not valid (unknown field or operator, bad value, too many rules); `detail` names the rule.',
    action: "Fix the rule; the fields and operators are listed in the operation's description in `/docs`.",
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported content type',
    meaning:
      'A request body in a content type the server does not read (e.g. `application/xml`), or compressed (`Content-Encoding: gzip`).',
    action: 'Send uncompressed JSON with `Content-Type: application/json`.',
  },
  payload_too_large: {
    status: 413,
    title: 'The request body is too large',
    meaning: 'The request body exceeds 64 KiB.',
    action: 'Send less; retrying unchanged will fail again.',
  },
  headers_too_large: {
    status: 431,
    title: 'The request headers are too large',
    meaning:
      "The request line and headers exceed 16 KiB (Node's limit). The connection closes after the answer.",
    action: 'Send fewer or shorter headers (a proxy may be adding them).',
  },
  request_timeout: {
    status: 408,
    title: 'The request took too long to arrive',
    meaning:
      "The request did not arrive within 60 seconds: its headers (Node's `headersTimeout`) or its whole body (`requestTimeout`), against connections held open by slow or stalled senders. The connection closes after the answer.",
    action: 'Retry on a new connection; check for a slow or stalled upload.',
  },
  expectation_failed: {
    status: 417,
    title: 'The expectation cannot be met',
    meaning:
      'The request has an `Expect` header other than `100-continue`, the only expectation the server knows (RFC 9110 §10.1.1).',
    action: 'Drop the `Expect` header, or send `Expect: 100-continue`.',
  },
  unauthenticated: {
    status: 401,
    title: 'Authentication required',
    meaning:
      'No `Authorization: Bearer <key>` header, or the key is unknown or was deleted; or the operator session cookie names a session that ended (signed out, expired, revoked) or an operator who was disabled. The response carries `WWW-Authenticate: Bearer`.',
    action:
      'Send a valid API key; if it was deleted, ask an admin for a new one. Do not retry with the same key.',
  },
  forbidden: {
    status: 403,
    title: 'Not allowed for this API key',
    meaning:
      'The API key is valid but its role may not do this: a product key calling an admin-only operation (products, API keys, the batch import) or creating a license for another product, a client key calling anything but validate, activate, deactivate and tokens by license key, or sending `customPayload` for a token (`pointer` `#/customPayload`: a client key may not put claims in a token), or a key deleting itself. For a signed-in operator: the operator role may not do this (each operation states the least role in its description), or a write came without the session’s CSRF token in `X-Keyturn-Csrf`.',
    action: 'Use a key or an operator with the right role (or send the CSRF header); retrying will not help.',
  },
  route_not_found: {
    status: 404,
    title: 'No such route',
    meaning: 'No operation at this path, with any method.',
    action: 'Check the path (`/api/v0/…` or `/v0/…`) against `/docs`.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    meaning:
      'The path exists, but not with this method (for example `PUT /api/v0/licenses/{id}`). The `Allow` header lists the methods the path has.',
    action: 'Use one of the methods in the `Allow` header (`PATCH` to change a license).',
  },
  license_not_found: {
    status: 404,
    title: 'License not found',
    meaning:
      "No license with this id or key is visible to the API key: it does not exist, or it belongs to another product (a product key never learns that other products' licenses exist).",
    action:
      'Treat the license as unknown: for validation, the key is not valid. Check the product id if you expected it to exist.',
  },
  product_not_found: {
    status: 404,
    title: 'Product not found',
    meaning: 'No product with this id is visible to the API key.',
    action: 'Check the product id; create the product first.',
  },
  api_key_not_found: {
    status: 404,
    title: 'API key not found',
    meaning: 'No API key with this id.',
    action: 'Check the id; it may have been deleted.',
  },
  activation_not_found: {
    status: 404,
    title: 'Activation not found',
    meaning:
      'No activation with this id or fingerprint on the license, or its floating seat lapsed (no heartbeat within `heartbeatTtl`).',
    action:
      'Treat the machine as not activated (deactivating twice is a 404 the second time); after a lapsed heartbeat, activate again.',
  },
  event_not_found: {
    status: 404,
    title: 'Event not found',
    meaning:
      "No event with this id is visible to the API key: another product's, a global one (API keys, endpoints for every product) for a product key, or one removed by retention (`KEYTURN_EVENT_RETENTION_DAYS`).",
    action: 'Check the id.',
  },
  webhook_endpoint_not_found: {
    status: 404,
    title: 'Webhook endpoint not found',
    meaning:
      'No webhook endpoint with this id is visible to the API key (another product’s, or a global one for a product key).',
    action: 'Check the id; it may have been deleted.',
  },
  webhook_delivery_not_found: {
    status: 404,
    title: 'Webhook delivery not found',
    meaning: 'No webhook delivery with this id is visible to the API key.',
    action: 'Check the id; deliveries go with their endpoint and with their event (retention).',
  },
  integration_not_found: {
    status: 404,
    title: 'Integration not found',
    meaning: 'No integration with this id exists (it may have been deleted).',
    action:
      'Check the id; a provider sending to a deleted integration gets this answer until its webhook is removed.',
  },
  provider_signature_invalid: {
    status: 400,
    title: 'Provider signature invalid',
    meaning:
      'A payment provider webhook whose signature does not verify with the integration’s signing secret (or is missing). Nothing was recorded or changed.',
    action: 'Check that the integration holds the signing secret the provider shows for this webhook.',
  },
  customer_not_found: {
    status: 404,
    title: 'Customer not found',
    meaning:
      'No customer with this id is visible to the API key (a product key sees only customers owning a license of its product); also a `customerId` on a license that names no customer.',
    action: 'Check the id; create the customer first.',
  },
  policy_not_found: {
    status: 404,
    title: 'Policy not found',
    meaning: "No policy with this id is visible to the API key (another product's policy is not found).",
    action:
      'Check the id and its product. (A `policyId` on a new license that names no policy of its product is a `400`.)',
  },
  entitlement_not_found: {
    status: 404,
    title: 'Entitlement not found',
    meaning:
      'No entitlement with this id is visible to the API key. (Unknown entitlement codes in a body are a `400 validation_failed` naming them.)',
    action: 'Check the id and its product.',
  },
  license_not_active: {
    status: 409,
    title: 'The license is not active',
    meaning:
      'The license is revoked or expired (or its product suspended), so it cannot be activated and no token is issued for it.',
    action:
      'Do not retry; reinstate or extend the license first (vendor), or tell the user the license is not active.',
  },
  product_suspended: {
    status: 409,
    title: 'The product is suspended',
    meaning:
      'The license\'s product is suspended: no license is created for it and its licenses cannot be changed (revoking still works; validation answers `reason: "suspended"`).',
    action: 'Resume the product first (`POST /products/{id}/resume`, admin), then retry.',
  },
  activation_limit_reached: {
    status: 409,
    title: 'Activation limit reached',
    meaning: 'Every activation the license allows (`maxActivations`) is taken.',
    action: 'Deactivate another machine, or raise `maxActivations` (vendor); then try again.',
  },
  usage_limit_reached: {
    status: 409,
    title: 'Usage limit reached',
    meaning:
      'A metered license (`maxUses`) cannot take the increment: `uses` plus `increment` would pass `maxUses`. Nothing was added; the problem carries `uses` and `maxUses`.',
    action:
      'Tell the user the quota is used up; a vendor resets it (`POST /licenses/:id/usage/reset`) or raises `maxUses`. Retrying unchanged fails again.',
  },
  customer_has_licenses: {
    status: 409,
    title: 'The customer owns licenses',
    meaning: 'The customer still owns licenses, so it cannot be deleted.',
    action:
      'Detach the licenses (`PATCH /licenses/{id}` with `customerId: null`) or delete them first, then delete the customer.',
  },
  customer_email_taken: {
    status: 409,
    title: 'A customer with this email exists',
    meaning: 'Another customer has this email (emails are unique, compared case-insensitively).',
    action: 'Look the customer up with `filter=email:eq:<email>` and use it.',
  },
  license_key_taken: {
    status: 409,
    title: 'The license key is taken',
    meaning: 'Another license already has this key (keys are unique across the server).',
    action:
      'Look the license up by its key (`POST /licenses/validate`) and use it, or give another key; keys from two old systems that collide need a prefix.',
  },
  external_id_taken: {
    status: 409,
    title: 'The external id is taken',
    meaning:
      'Another license of the product already has this `externalId` (an id from the system it was imported from).',
    action:
      'Find that license with `GET /licenses?productId=…&externalId=…` and use it; a batch import (`POST /licenses/import`) does so by itself.',
  },
  policy_in_use: {
    status: 409,
    title: 'The policy is in use',
    meaning: 'Licenses were made from this policy, so it cannot be deleted.',
    action: 'Keep the policy (rename it), or delete those licenses first.',
  },
  entitlement_code_taken: {
    status: 409,
    title: 'The entitlement code is taken',
    meaning: 'The product already has an entitlement with this code.',
    action: 'Use the existing entitlement, or another code.',
  },
  license_does_not_expire: {
    status: 409,
    title: 'The license does not expire',
    meaning:
      'A renewal of a license that never expires (`expirationDate: null`, and not waiting for a first activation).',
    action: 'Nothing to renew; set an `expirationDate` first if the license should expire.',
  },
  idempotency_key_in_progress: {
    status: 409,
    title: 'A request with this idempotency key is in progress',
    meaning:
      'A request with this `Idempotency-Key` (for this API key) is still running: this is a retry that came too early.',
    action: "Retry the same request with backoff; it then gets the first request's response.",
  },
  idempotency_key_reused: {
    status: 422,
    title: 'The idempotency key was used for another request',
    meaning:
      'The `Idempotency-Key` was already used by this API key, within 24 hours, for a different request (another method, path or body).',
    action: 'Use a new key for a new request; a key names one request.',
  },
  idempotency_key_unrecoverable: {
    status: 409,
    title: 'The request with this idempotency key completed, but its response cannot be shown again',
    meaning:
      'The first request with this `Idempotency-Key` committed its change, but its process stopped before answering, and the answer held something shown only once (the secret of a new API key or webhook endpoint). Nothing new was created.',
    action:
      'Find the object through its event (`GET /events`, its `requestId` is the first request’s); delete it or rotate its secret, then create again with a new key.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    meaning:
      'A rate limit was reached (per management API key, or per client IP for client keys and unauthenticated requests; `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` say which budget and when it refills), or the key-guessing guard blocked this IP from the by-key routes after too many `license_not_found` answers.',
    action:
      'Wait `Retry-After` seconds, then retry. An application validating on start-up should not retry in a loop; a vendor back end should authenticate with a management key (its own budget).',
  },
  internal_error: {
    status: 500,
    title: 'Internal server error',
    meaning: 'The server failed unexpectedly; the details are in its log under `requestId`.',
    action:
      'Retry idempotent requests (GET, validate, revoke, reinstate, any POST sent with an `Idempotency-Key`) with backoff; report the `requestId` if it persists.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    meaning: 'The server cannot serve now: `GET /readyz` when the database does not answer.',
    action: 'Retry later with backoff; a load balancer should route elsewhere.',
  },
  database_unavailable: {
    status: 503,
    title: 'Database unavailable',
    meaning:
      'The database did not answer in time: it is restarting, failing over, or unreachable. Nothing of this request was stored unless a retry with the same `Idempotency-Key` says so.',
    action:
      'Retry after `Retry-After` seconds with backoff (send an `Idempotency-Key` with creating requests so a retry never duplicates). An application may fall back to its last signed token meanwhile.',
  },
  storage_full: {
    status: 503,
    title: 'Storage full',
    meaning:
      'The database has no room left for a write (its disk is full). Reads still answer; nothing already stored is damaged, and nothing of this write was stored.',
    action:
      'Retry after `Retry-After` seconds; the operator frees disk space, after which writes succeed again without a restart.',
  },
  portal_unavailable: {
    status: 409,
    title: 'Customer portal unavailable',
    meaning:
      'The customer portal is off (`KEYTURN_PORTAL`) or the server sends no mail (`KEYTURN_SMTP_URL`), so no sign-in code can reach the customer.',
    action: 'Turn the portal on and configure mail, then retry.',
  },
  operator_not_found: {
    status: 404,
    title: 'Operator not found',
    meaning: 'No operator account has this id.',
    action: 'Check the id; list the operators to find it.',
  },
  operator_email_taken: {
    status: 409,
    title: 'An operator with this email exists',
    meaning: 'Another operator account has this email (emails are unique, compared case-insensitively).',
    action: 'Use the existing account, or another email.',
  },
  operator_session_not_found: {
    status: 404,
    title: 'Operator session not found',
    meaning:
      'The operator has no live session with this id (it ended, was revoked, or is another operator’s).',
    action: 'List the sessions again.',
  },
  activation_request_invalid: {
    status: 400,
    title: 'The activation request is not valid',
    meaning:
      'The offline activation request is not a request file (armour, parts, base64url, JSON, fields, over 8 KiB), was made in the future, or was altered: its HMAC does not match the key of the license it names. `detail` says which.',
    action: 'Ask for a new request file from the machine, sent unchanged (as a file, not retyped).',
  },
  license_floating: {
    status: 409,
    title: 'The license is floating',
    meaning:
      'The license has a `heartbeatTtl` (floating seats), and a machine activated offline cannot send heartbeats, so it cannot be activated offline.',
    action: 'Activate the machine online, or use a license without `heartbeatTtl` for air-gapped machines.',
  },
  deactivation_code_invalid: {
    status: 422,
    title: 'The deactivation code is not valid',
    meaning:
      "The deactivation code is not one the activation's machine made: mistyped, for another activation, or dated more than a day before the activation or after now (a wrong clock on the machine). Nothing was freed. `triesLeft` says how many wrong codes remain before the activation's offline deactivation locks.",
    action: 'Check the code with the user (it is read in groups of four) and try again.',
  },
  deactivation_locked: {
    status: 409,
    title: 'Offline deactivation is locked',
    meaning:
      'Five wrong deactivation codes in a row were given for this activation, so its offline deactivation is locked for an hour (`retryAfter`, seconds; also the `Retry-After` header).',
    action:
      'Wait until the lock ends, then enter the code again; or delete the activation (`DELETE /activations/:id`).',
  },
  two_factor_enrolled: {
    status: 409,
    title: 'Two-factor authentication is already on',
    meaning:
      'The operator already has a confirmed authenticator; a new enrolment would replace it unnoticed.',
    action: 'Disable two-factor authentication with a code (or a recovery code) first, then enrol again.',
  },
  two_factor_not_enrolled: {
    status: 409,
    title: 'Two-factor authentication is not on',
    meaning:
      'The request needs a confirmed authenticator (or an enrolment waiting for its first code) and the operator has none; an owner who has none cannot require two factors of everyone.',
    action: 'Enrol an authenticator first (`POST /operator/2fa/totp`, then confirm it with a code).',
  },
  sso_refused: {
    status: 403,
    title: 'Single sign-on refused',
    meaning:
      'The identity provider signed the person in, but Keyturn makes no account for them: the address is not verified by the provider, its domain is not in `KEYTURN_OIDC_DOMAINS`, an operator account with the address exists and is not linked to this identity, or the linked account is disabled.',
    action:
      'Ask an owner: they can allow the domain, or invite the address; an existing account keeps signing in with its password.',
  },
}

export const FieldErrorSchema = Type.Object(
  {
    pointer: Type.String({
      description: 'JSON Pointer (fragment form) into the request',
      examples: ['#/maxActivations'],
    }),
    detail: Type.String(),
  },
  { additionalProperties: false },
)
export type FieldError = Static<typeof FieldErrorSchema>

/** RFC 9457 problem details, the body of every error response. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ examples: ['/problems/license_not_found'] }),
    title: Type.String({ examples: ['License not found'] }),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String({ examples: ['No license lic_7fQx2mNc4RtYp9LkWv3bHs is visible to this API key.'] }),
    code: ErrorCodeSchema,
    requestId: Type.String({ examples: ['req_2mXc9vBn4KqLs7TdPw8yZa'] }),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { additionalProperties: true },
)
export type Problem = Static<typeof ProblemSchema>
