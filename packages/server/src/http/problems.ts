import type { ErrorCode } from '@keyturn/protocol'

type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 413 | 415 | 422 | 429 | 431 | 500 | 503

/** The one table that decides each code's HTTP status and title: a code without one does not compile. */
export const problemByCode: Record<ErrorCode, { status: ErrorStatus; title: string }> = {
  bad_request: { status: 400, title: 'The request could not be read' },
  validation_failed: { status: 400, title: 'The request is not valid' },
  invalid_filter: { status: 400, title: 'The filter is not valid' },
  unsupported_media_type: { status: 415, title: 'Unsupported content type' },
  payload_too_large: { status: 413, title: 'The request body is too large' },
  headers_too_large: { status: 431, title: 'The request headers are too large' },
  request_timeout: { status: 408, title: 'The request took too long to arrive' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  forbidden: { status: 403, title: 'Not allowed for this API key' },
  route_not_found: { status: 404, title: 'No such route' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  license_not_found: { status: 404, title: 'License not found' },
  product_not_found: { status: 404, title: 'Product not found' },
  api_key_not_found: { status: 404, title: 'API key not found' },
  activation_not_found: { status: 404, title: 'Activation not found' },
  license_not_active: { status: 409, title: 'The license is not active' },
  activation_limit_reached: { status: 409, title: 'Activation limit reached' },
  idempotency_key_in_progress: { status: 409, title: 'A request with this idempotency key is in progress' },
  idempotency_key_reused: { status: 422, title: 'The idempotency key was used for another request' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
}

/** Every problem response an operation may give, for route schemas: `{ 400: ProblemSchema, … }`. */
export function statusesOf(codes: readonly ErrorCode[]): ErrorStatus[] {
  return [...new Set(codes.map((code) => problemByCode[code].status))]
}
