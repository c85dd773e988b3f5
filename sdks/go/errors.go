package keyturn

import (
	"fmt"
	"time"
)

// APIError is a refusal by the API: the RFC 9457 problem's fields, Code from Keyturn's error
// catalogue (activation_limit_reached, license_not_found, rate_limited, unauthenticated, …).
type APIError struct {
	Status    int
	Code      string
	Detail    string
	RequestID string
	// Errors lists the fields at fault, when the problem names them.
	Errors []FieldError
	// RetryAfter is the answer's Retry-After, when HasRetryAfter.
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// FieldError names one field at fault (a JSON pointer into the request) and why.
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("keyturn: %s (HTTP %d): %s", e.Code, e.Status, e.Detail)
}

// ConnectionError means the server could not be reached in time, or did not answer with Keyturn's JSON.
type ConnectionError struct {
	Message string
	Err     error
}

func (e *ConnectionError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("keyturn: %s: %v", e.Message, e.Err)
	}
	return "keyturn: " + e.Message
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// TokenError is an offline license-token check that failed: the token is not to be trusted. Code
// is one of malformed, invalid_signature, expired, not_yet_valid, product_mismatch,
// unsupported_algorithm, fingerprint_mismatch, entitlements_missing.
type TokenError struct {
	Code    string
	Message string
}

func (e *TokenError) Error() string { return "keyturn: " + e.Code + ": " + e.Message }

// SignatureError is a signed answer that was missing, altered, replayed, stale or signed by another
// key. Code is one of unsigned, malformed, unknown_key, invalid_signature, digest_mismatch,
// nonce_mismatch, stale.
type SignatureError struct {
	Code    string
	Message string
	// SignedAt is, for stale, when the server signed the answer (its signature otherwise
	// verified); the zero time otherwise.
	SignedAt time.Time
}

func (e *SignatureError) Error() string { return "keyturn: " + e.Code + ": " + e.Message }

// WebhookError is a request that is not a genuine, fresh Keyturn delivery. Code is one of
// malformed, stale, invalid_signature, not_an_event.
type WebhookError struct {
	Code    string
	Message string
}

func (e *WebhookError) Error() string { return "keyturn: " + e.Code + ": " + e.Message }
