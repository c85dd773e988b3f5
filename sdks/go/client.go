package keyturn

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	// DefaultTimeout bounds one attempt of a call.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how many times a retryable call is retried.
	DefaultMaxRetries = 2
	userAgent         = "keyturn-go/0.1.0"
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// BaseURL is the server's address, e.g. https://licensing.example.com; /api/v0 is added.
	BaseURL string
	// APIKey is an API key secret (usually a kt_client_… key in an application).
	APIKey string
	// HTTPClient sends the requests (default: a client of its own).
	HTTPClient *http.Client
	// Timeout bounds one attempt (default DefaultTimeout).
	Timeout time.Duration
	// MaxRetries is the number of retries (default DefaultMaxRetries); NoRetries turns them off.
	MaxRetries int
	// NoRetries turns retries (and the generated Idempotency-Keys) off.
	NoRetries bool
	// RetryBaseDelay is the first retry's longest wait, doubling each time (default 250 ms).
	RetryBaseDelay time.Duration
	// RetryMaxDelay is the longest wait; a longer Retry-After is not waited for (default 20 s).
	RetryMaxDelay time.Duration
	// PublicKeys are the product's public keys (PEM or JWK JSON). When given, the application-facing
	// calls send a fresh nonce and accept only an answer signed by one of them for that request.
	PublicKeys []string
	// SignatureTolerance is how far a signed answer's time may be from now (default 300 s).
	SignatureTolerance time.Duration
	// Now is this machine's clock, for the signature's time check (default time.Now).
	Now func() time.Time
	// Sleep waits between retries (default: a timer that ctx can cancel).
	Sleep func(ctx context.Context, d time.Duration) error
	// Random is the jitter's random source in [0, 1) (default math/rand).
	Random func() float64
}

// Client calls the Keyturn API. Refusals are *APIError; an unreachable server *ConnectionError; a
// bad signature *SignatureError. Retries follow the JavaScript client: after a network error, a
// timeout, a 5xx, a 429 or idempotency_key_in_progress, of GETs, of repeatable POSTs (validate,
// heartbeat) and of POSTs that carry an Idempotency-Key (one generated per call); the waits are
// random ("full jitter") up to RetryBaseDelay doubling each time, or the server's Retry-After
// when it is at most RetryMaxDelay (a longer one is not waited for).
type Client struct {
	apiURL string
	o      Options
}

// NewClient returns a client with the options' defaults filled in.
func NewClient(options Options) *Client {
	o := options
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.NoRetries {
		o.MaxRetries = 0
	} else if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.RetryBaseDelay == 0 {
		o.RetryBaseDelay = 250 * time.Millisecond
	}
	if o.RetryMaxDelay == 0 {
		o.RetryMaxDelay = 20 * time.Second
	}
	if o.SignatureTolerance == 0 {
		o.SignatureTolerance = DefaultSignatureTolerance
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Random == nil {
		o.Random = mathrand.Float64
	}
	root := strings.TrimSuffix(strings.TrimRight(o.BaseURL, "/"), "/api/v0")
	return &Client{apiURL: root + "/api/v0", o: o}
}

// ValidationResult is the answer of ValidateLicense.
type ValidationResult struct {
	IsValid   bool           `json:"isValid"`
	Reason    *string        `json:"reason"`
	Timestamp string         `json:"timestamp"`
	License   map[string]any `json:"license"`
}

// LicenseKeyRequest names a license by its key, and this machine.
type LicenseKeyRequest struct {
	Key       string `json:"key"`
	ProductID string `json:"productId"`
	// Fingerprint is this machine (required to activate, deactivate and heartbeat).
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ValidateLicense checks a license online; an unknown key is an *APIError license_not_found.
func (c *Client) ValidateLicense(ctx context.Context, request LicenseKeyRequest, entitlements ...string) (*ValidationResult, error) {
	body := map[string]any{"key": request.Key, "productId": request.ProductID}
	if request.Fingerprint != "" {
		body["fingerprint"] = request.Fingerprint
	}
	if len(entitlements) > 0 {
		body["entitlements"] = entitlements
	}
	var result ValidationResult
	err := c.call(ctx, call{method: "POST", path: "/licenses/validate", body: body, repeatable: true, signed: true}, &result)
	return resultOrNil(&result, err)
}

// ActivateLicense takes a seat for this machine; when every seat is taken it is an *APIError
// activation_limit_reached (409). name may be empty.
func (c *Client) ActivateLicense(ctx context.Context, request LicenseKeyRequest, name string) (map[string]any, error) {
	body := map[string]any{"key": request.Key, "productId": request.ProductID, "fingerprint": request.Fingerprint}
	if name != "" {
		body["name"] = name
	}
	var activation map[string]any
	err := c.call(ctx, call{method: "POST", path: "/licenses/activate", body: body, signed: true}, &activation)
	return activation, err
}

// DeactivateLicense frees this machine's seat.
func (c *Client) DeactivateLicense(ctx context.Context, request LicenseKeyRequest) error {
	return c.call(ctx, call{method: "POST", path: "/licenses/deactivate", body: request}, nil)
}

// HeartbeatLicense renews this machine's seat; a lapsed floating seat is activation_not_found.
func (c *Client) HeartbeatLicense(ctx context.Context, request LicenseKeyRequest) (map[string]any, error) {
	var activation map[string]any
	err := c.call(ctx, call{method: "POST", path: "/licenses/heartbeat", body: request, repeatable: true, signed: true}, &activation)
	return activation, err
}

// IncrementUsage adds increment to the license's uses; past maxUses it is usage_limit_reached.
func (c *Client) IncrementUsage(ctx context.Context, key, productID string, increment int) (map[string]any, error) {
	body := map[string]any{"key": key, "productId": productID, "increment": increment}
	var license map[string]any
	err := c.call(ctx, call{method: "POST", path: "/licenses/usage", body: body, signed: true}, &license)
	return license, err
}

// LicenseToken is the answer of CreateLicenseToken: check Token offline with ValidateLicenseToken.
type LicenseToken struct {
	Token   string         `json:"token"`
	Payload map[string]any `json:"payload"`
	License map[string]any `json:"license"`
}

// CreateLicenseToken asks for a license token, bound to request.Fingerprint when given; ttl in
// seconds (0: the server's default).
func (c *Client) CreateLicenseToken(ctx context.Context, request LicenseKeyRequest, ttl int) (*LicenseToken, error) {
	body := map[string]any{"key": request.Key, "productId": request.ProductID}
	if request.Fingerprint != "" {
		body["fingerprint"] = request.Fingerprint
	}
	if ttl > 0 {
		body["ttl"] = ttl
	}
	var token LicenseToken
	err := c.call(ctx, call{method: "POST", path: "/licenses/tokens", body: body, signed: true}, &token)
	return resultOrNil(&token, err)
}

// IssuedLicenseFile is the answer of CreateLicenseFile: check LicenseFile offline with VerifyLicenseFile.
type IssuedLicenseFile struct {
	LicenseFile string         `json:"licenseFile"`
	ExpiresAt   *string        `json:"expiresAt"`
	License     map[string]any `json:"license"`
}

// CreateLicenseFile asks for a license file, for the machine request.Fingerprint when given
// (which must be activated); encrypt makes it readable only with the license key (and on that
// machine).
func (c *Client) CreateLicenseFile(ctx context.Context, request LicenseKeyRequest, encrypt bool) (*IssuedLicenseFile, error) {
	body := map[string]any{"key": request.Key, "productId": request.ProductID, "encrypt": encrypt}
	if request.Fingerprint != "" {
		body["fingerprint"] = request.Fingerprint
	}
	var file IssuedLicenseFile
	err := c.call(ctx, call{method: "POST", path: "/licenses/license-file", body: body}, &file)
	return resultOrNil(&file, err)
}

// Request makes any other API call (path under /api/v0; body nil or JSON-encodable) into out
// (nil to discard), with the same errors and retry rules.
func (c *Client) Request(ctx context.Context, method, path string, body any, out any) error {
	return c.call(ctx, call{method: strings.ToUpper(method), path: path, body: body}, out)
}

func resultOrNil[T any](value *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return value, nil
}

type call struct {
	method     string
	path       string
	body       any
	repeatable bool
	signed     bool
	// keep, when not nil, receives the verified signed answer as received.
	keep *keptAnswer
	// signWith, when not nil, checks the signed answer instead of the client's options.
	signWith *signPolicy
}

// signPolicy is how a signed answer is checked: the keys, the clock and the tolerance.
type signPolicy struct {
	publicKeys []string
	now        func() time.Time
	tolerance  time.Duration
}

// keptAnswer is a verified signed answer kept to be checked again later (the license guard's proof).
type keptAnswer struct {
	answer SignedAnswer
	nonce  string
}

// validateKept is ValidateLicense whose answer must be signed as signWith says, giving the signed
// answer as received (for the license guard).
func (c *Client) validateKept(ctx context.Context, request LicenseKeyRequest, signWith signPolicy) (*keptAnswer, error) {
	body := map[string]any{"key": request.Key, "productId": request.ProductID}
	if request.Fingerprint != "" {
		body["fingerprint"] = request.Fingerprint
	}
	kept := &keptAnswer{}
	err := c.call(ctx, call{method: "POST", path: "/licenses/validate", body: body, repeatable: true, signed: true, keep: kept, signWith: &signWith}, nil)
	if err != nil {
		return nil, err
	}
	if kept.nonce == "" {
		return nil, errors.New("keyturn: the validation answer was not checked") // unreachable: signed with keys
	}
	return kept, nil
}

func (c *Client) call(ctx context.Context, request call, out any) error {
	header := http.Header{}
	header.Set("Authorization", "Bearer "+c.o.APIKey)
	header.Set("Accept", "application/json")
	header.Set("User-Agent", userAgent)
	// A POST is retried only with an Idempotency-Key: the server answers a retry with the first response.
	idempotent := request.method == "POST" && !request.repeatable && c.o.MaxRetries > 0
	if idempotent {
		header.Set("Idempotency-Key", newUUID())
	}
	retryable := request.method == "GET" || request.repeatable || idempotent
	signWith := request.signWith
	if signWith == nil && len(c.o.PublicKeys) > 0 {
		signWith = &signPolicy{publicKeys: c.o.PublicKeys, now: c.o.Now, tolerance: c.o.SignatureTolerance}
	}
	nonce := ""
	body := request.body
	if request.signed && signWith != nil {
		// One nonce per call (its retries resend the same body): the answer must echo it, signed.
		nonce = NewNonce()
		header.Set("Keyturn-Sign", "ed25519")
		encoded, err := json.Marshal(body)
		if err != nil {
			return err
		}
		var withNonce map[string]any
		if err := json.Unmarshal(encoded, &withNonce); err != nil {
			return err
		}
		withNonce["nonce"] = nonce
		body = withNonce
	}
	var data []byte
	if body != nil {
		encoded, err := json.Marshal(body)
		if err != nil {
			return err
		}
		data = encoded
		header.Set("Content-Type", "application/json")
	}
	for attempt := 0; ; attempt++ {
		err := c.attempt(ctx, request.method, c.apiURL+request.path, header, data, nonce, signWith, request.keep, out)
		if err == nil {
			return nil
		}
		delay, retry := c.retryDelay(err, attempt)
		if !retryable || !retry || ctx.Err() != nil {
			return err
		}
		if sleepErr := c.o.Sleep(ctx, delay); sleepErr != nil {
			return sleepErr
		}
	}
}

func (c *Client) retryDelay(err error, attempt int) (time.Duration, bool) {
	if attempt >= c.o.MaxRetries {
		return 0, false
	}
	ceiling := math.Min(float64(c.o.RetryMaxDelay), float64(c.o.RetryBaseDelay)*math.Pow(2, float64(attempt)))
	backoff := time.Duration(c.o.Random() * ceiling) // "full jitter"
	var connection *ConnectionError
	if errors.As(err, &connection) {
		return backoff, true
	}
	var refused *APIError
	if errors.As(err, &refused) && (refused.Status >= 500 || refused.Status == 429 || refused.Code == "idempotency_key_in_progress") {
		if !refused.HasRetryAfter {
			return backoff, true
		}
		// The server said when: wait that long, unless it is longer than we would ever wait.
		if refused.RetryAfter > c.o.RetryMaxDelay {
			return 0, false
		}
		if refused.RetryAfter > backoff {
			return refused.RetryAfter, true
		}
		return backoff, true
	}
	return 0, false
}

func (c *Client) attempt(ctx context.Context, method, target string, header http.Header, data []byte, nonce string, signWith *signPolicy, keep *keptAnswer, out any) error {
	attemptCtx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	var reader io.Reader
	if data != nil {
		reader = bytes.NewReader(data)
	}
	request, err := http.NewRequestWithContext(attemptCtx, method, target, reader)
	if err != nil {
		return err
	}
	request.Header = header.Clone()
	origin := request.URL.Scheme + "://" + request.URL.Host
	response, err := c.o.HTTPClient.Do(request)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if attemptCtx.Err() != nil {
			return &ConnectionError{Message: fmt.Sprintf("no answer from %s within %s", origin, c.o.Timeout), Err: err}
		}
		return &ConnectionError{Message: "cannot reach the Keyturn server at " + origin, Err: err}
	}
	defer response.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(response.Body, 16<<20))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &ConnectionError{Message: fmt.Sprintf("the connection to %s broke while reading the answer (HTTP %d)", origin, response.StatusCode), Err: err}
	}
	if response.StatusCode == http.StatusNoContent {
		return nil
	}
	retryAfter, hasRetryAfter := parseRetryAfter(response.Header.Get("Retry-After"))
	if len(raw) == 0 && response.StatusCode < 400 {
		return nil
	}
	if !json.Valid(raw) {
		if response.StatusCode >= 500 || response.StatusCode == 429 {
			// A proxy's own error page: the status is what matters, and it may be retried.
			return bareProblem(response.StatusCode, retryAfter, hasRetryAfter)
		}
		return &ConnectionError{Message: fmt.Sprintf("the server at %s did not answer with JSON (HTTP %d)", origin, response.StatusCode)}
	}
	if response.StatusCode >= 400 {
		var problem struct {
			Status    int          `json:"status"`
			Code      *string      `json:"code"`
			Detail    *string      `json:"detail"`
			RequestID string       `json:"requestId"`
			Errors    []FieldError `json:"errors"`
		}
		if json.Unmarshal(raw, &problem) != nil || problem.Code == nil || problem.Detail == nil {
			return bareProblem(response.StatusCode, retryAfter, hasRetryAfter)
		}
		return &APIError{
			Status: response.StatusCode, Code: *problem.Code, Detail: *problem.Detail, RequestID: problem.RequestID,
			Errors: problem.Errors, RetryAfter: retryAfter, HasRetryAfter: hasRetryAfter,
		}
	}
	if nonce != "" {
		answer := SignedAnswer{Status: response.StatusCode, Header: response.Header, Body: raw, Method: method, Path: request.URL.Path}
		err := VerifySignedAnswer(
			answer,
			SignatureCheck{PublicKeys: signWith.publicKeys, Nonce: nonce, Now: signWith.now(), Tolerance: signWith.tolerance},
		)
		if err != nil {
			return err
		}
		if keep != nil {
			keep.answer, keep.nonce = answer, nonce
		}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &ConnectionError{Message: "the answer is not the JSON expected", Err: err}
	}
	return nil
}

func bareProblem(status int, retryAfter time.Duration, hasRetryAfter bool) *APIError {
	code := "bad_request"
	if status >= 500 {
		code = "internal_error"
	}
	return &APIError{
		Status: status, Code: code, Detail: fmt.Sprintf("HTTP %d without a problem body", status),
		RetryAfter: retryAfter, HasRetryAfter: hasRetryAfter,
	}
}

// parseRetryAfter reads Retry-After: delta-seconds or an HTTP date.
func parseRetryAfter(value string) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if seconds, err := strconv.ParseUint(value, 10, 32); err == nil {
		return time.Duration(seconds) * time.Second, true
	}
	if at, err := http.ParseTime(value); err == nil {
		if wait := time.Until(at); wait > 0 {
			return wait, true
		}
		return 0, true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func newUUID() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
