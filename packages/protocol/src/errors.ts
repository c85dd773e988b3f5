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
  'unauthenticated',
  'forbidden',
  'route_not_found',
  'method_not_allowed',
  'license_not_found',
  'product_not_found',
  'api_key_not_found',
  'activation_not_found',
  'license_not_active',
  'activation_limit_reached',
  'idempotency_key_in_progress',
  'idempotency_key_reused',
  'rate_limited',
  'internal_error',
  'service_unavailable',
])
export type ErrorCode = Static<typeof ErrorCodeSchema>

/** Written only here (RFC 9457 allows a relative URI); clients switch on `code`. */
export const problemType = (code: ErrorCode): string => `/problems/${code}`

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
