package keyturn

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxClockTolerance is the largest clock tolerance accepted: beyond an hour it is a wrong clock, not skew.
const MaxClockTolerance = time.Hour

// MaxLicenseTokenLength is the longest token accepted; longer ones are refused unparsed.
const MaxLicenseTokenLength = 16 * 1024

const (
	licenseTokenType   = "license+jwt"
	licenseTokenIssuer = "keyturn"
)

// TokenOptions says what a license token must be to be valid.
type TokenOptions struct {
	// PublicKeyPEM is the product's public key: PEM (SPKI), or a JWK's JSON.
	PublicKeyPEM string
	// PublicKeys are more keys (a retired one after a rotation), tried like PublicKeyPEM.
	PublicKeys []string
	// ProductID is the product the token must be for (its aud).
	ProductID string
	// Fingerprint, when not empty, is this machine's fingerprint: the token must be bound to it.
	Fingerprint string
	// Now is the time to judge expiry at; the zero time means time.Now().
	Now time.Time
	// ClockTolerance is the accepted clock skew for exp and nbf (default 0).
	ClockTolerance time.Duration
	// RequireEntitlements are entitlement codes the license must carry.
	RequireEntitlements []string
}

// OfflineValidationResult is what a valid token says (the JavaScript client's result).
type OfflineValidationResult struct {
	LicenseID string `json:"licenseId"`
	// ExpiresAt is when the token expires (ISO 8601).
	ExpiresAt    string         `json:"expiresAt"`
	ProductID    string         `json:"productId"`
	CustomFields map[string]any `json:"customFields"`
	// IssuedAt is when the token was issued (ISO 8601).
	IssuedAt string `json:"issuedAt"`
	// Fingerprint is the machine the token is bound to, empty when it is not bound.
	Fingerprint  string   `json:"fingerprint,omitempty"`
	Entitlements []string `json:"entitlements"`
}

func tokenError(code, format string, args ...any) *TokenError {
	return &TokenError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// decodeCanonical accepts only canonical base64url: no padding, unused bits zero.
func decodeCanonical(part string) ([]byte, bool) {
	for i := 0; i < len(part); i++ {
		c := part[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, false // the decoder would skip new lines
		}
	}
	decoded, err := base64.RawURLEncoding.Strict().DecodeString(part)
	return decoded, err == nil
}

// parseObject reads a JSON object; numbers become float64, as in JavaScript, the reference.
// A map, not a struct: encoding/json matches struct fields case-insensitively.
func parseObject(data []byte) (map[string]any, bool) {
	var object map[string]any
	if err := json.Unmarshal(data, &object); err != nil || object == nil {
		return nil, false
	}
	return object, true
}

func number(value any) (float64, bool) {
	f, ok := value.(float64)
	return f, ok && !math.IsInf(f, 0) && !math.IsNaN(f)
}

func integer(value any) bool {
	f, ok := number(value)
	return ok && f == math.Trunc(f)
}

var dateTimePattern = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$`)

var daysInMonth = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// isDateTime is an RFC 3339 date-time, as the JSON Schema date-time format reads it.
func isDateTime(value any) bool {
	text, ok := value.(string)
	if !ok {
		return false
	}
	m := dateTimePattern.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	year, month, day := n(1), n(2), n(3)
	leap := year%4 == 0 && (year%100 != 0 || year%400 == 0)
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	if last := daysInMonth[month]; day > last && !(month == 2 && leap && day == 29) {
		return false
	}
	if n(4) > 23 || n(5) > 59 || n(6) > 60 {
		return false
	}
	return m[7] == "" || (n(8) <= 23 && n(9) <= 59)
}

func isID(value any, prefix string) bool {
	text, ok := value.(string)
	return ok && strings.HasPrefix(text, prefix) && len(text) <= 64
}

func isString(value any) bool {
	_, ok := value.(string)
	return ok
}

// hasLicenseClaims checks the claims' schema: the license's fields and the registered claims.
func hasLicenseClaims(claims map[string]any) bool {
	if v, ok := claims["customFields"]; ok {
		if _, isObject := v.(map[string]any); !isObject {
			return false
		}
	}
	if v, ok := claims["fingerprint"]; ok && !isString(v) {
		return false
	}
	if v, ok := claims["entitlements"]; ok {
		list, isList := v.([]any)
		if !isList {
			return false
		}
		for _, code := range list {
			if !isString(code) {
				return false
			}
		}
	}
	if v, ok := claims["nbf"]; ok && !integer(v) {
		return false
	}
	return isID(claims["licenseId"], "lic_") && isID(claims["productId"], "prd_") &&
		isDateTime(claims["expirationDate"]) && isDateTime(claims["createdAt"]) &&
		isString(claims["iss"]) && isID(claims["sub"], "lic_") && isID(claims["aud"], "prd_") &&
		integer(claims["iat"]) && integer(claims["exp"]) && isString(claims["jti"])
}

func checkCritical(header map[string]any) error {
	crit, present := header["crit"]
	if !present {
		return nil
	}
	list, ok := crit.([]any)
	valid := ok && len(list) > 0
	for _, name := range list {
		if text, isText := name.(string); !isText || text == "" {
			valid = false
		}
	}
	if !valid {
		return tokenError("malformed", `The token header "crit" must be a list of names.`)
	}
	return tokenError("unsupported_algorithm", "The token requires an extension that is not supported.")
}

func checkClaims(payload map[string]any, productID string, now, tolerance float64) error {
	for _, claim := range []string{"exp", "iat", "sub", "jti"} {
		if _, ok := payload[claim]; !ok {
			return tokenError("malformed", `The token lacks the "%s" claim.`, claim)
		}
	}
	if iss, _ := payload["iss"].(string); iss != licenseTokenIssuer || !isString(payload["iss"]) {
		return tokenError("malformed", "The token is not issued by Keyturn.")
	}
	if !isString(payload["sub"]) {
		return tokenError("malformed", `The token "sub" claim must be a string.`)
	}
	var audiences []any
	switch aud := payload["aud"].(type) {
	case string:
		audiences = []any{aud}
	case []any:
		audiences = aud
	}
	found := false
	for _, audience := range audiences {
		if text, ok := audience.(string); ok && text == productID {
			found = true
		}
	}
	if !found {
		return tokenError("product_mismatch", "The token is for another product.")
	}
	if _, ok := number(payload["iat"]); !ok {
		return tokenError("malformed", `The token "iat" claim must be a number.`)
	}
	if nbf, present := payload["nbf"]; present {
		if value, ok := number(nbf); !ok || value > now+tolerance {
			return tokenError("not_yet_valid", "The token is not valid yet; check the clock.")
		}
	}
	exp, ok := number(payload["exp"])
	if !ok {
		return tokenError("malformed", `The token "exp" claim must be a number.`)
	}
	if exp <= now-tolerance {
		return tokenError("expired", "The token has expired.")
	}
	return nil
}

// ValidateLicenseToken validates a license token offline, with no network: the same checks, in
// the same order and with the same error codes as the JavaScript client. It returns what the token
// says, or a *TokenError whose Code says why it is not to be trusted (use errors.As).
func ValidateLicenseToken(token string, options TokenOptions) (*OfflineValidationResult, error) {
	// The clock options first: an invalid one must never widen what is accepted.
	if options.ClockTolerance < 0 || options.ClockTolerance > MaxClockTolerance {
		return nil, fmt.Errorf("keyturn: ClockTolerance must be from 0 to %s", MaxClockTolerance)
	}
	if len(token) == 0 || len(token) > MaxLicenseTokenLength {
		return nil, tokenError("malformed", "A license token is a JWT of at most %d characters.", MaxLicenseTokenLength)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, tokenError("malformed", "A license token has three dot-separated parts.")
	}
	encodedHeader, encodedPayload, encodedSignature := parts[0], parts[1], parts[2]
	headerBytes, headerCanonical := decodeCanonical(encodedHeader)
	if !headerCanonical {
		// Judged leniently here (a header that is not canonical fails below, after alg and typ).
		lenient, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(encodedHeader, "="))
		if err != nil {
			return nil, tokenError("malformed", "The token header is not valid base64url JSON.")
		}
		headerBytes = lenient
	}
	header, ok := parseObject(headerBytes)
	if !ok {
		return nil, tokenError("malformed", "The token header is not valid base64url JSON.")
	}
	// Never let the token choose its algorithm (RFC 8725): none, HS256 and the rest stop here.
	if alg, isText := header["alg"].(string); !isText || alg != "EdDSA" {
		return nil, tokenError("unsupported_algorithm", "Only EdDSA tokens are accepted, not %v.", header["alg"])
	}
	if typ, isText := header["typ"].(string); !isText || typ != licenseTokenType {
		return nil, tokenError("malformed", "The token type must be %s.", licenseTokenType)
	}
	if err := checkCritical(header); err != nil {
		return nil, err
	}
	payloadBytes, payloadCanonical := decodeCanonical(encodedPayload)
	signature, signatureCanonical := decodeCanonical(encodedSignature)
	if !headerCanonical || !payloadCanonical || !signatureCanonical || len(signature) != ed25519.SignatureSize {
		return nil, tokenError("malformed", "The token is not three canonical base64url parts with an Ed25519 signature.")
	}
	keys, err := keyList(append([]string{options.PublicKeyPEM}, options.PublicKeys...)[boolToInt(options.PublicKeyPEM == ""):])
	if err != nil {
		return nil, err
	}
	kid, hasKid := header["kid"].(string)
	var key ed25519.PublicKey
	for _, candidate := range keys {
		if hasKid && candidate.kid == kid {
			key = candidate.key
			break
		}
	}
	if key == nil {
		return nil, tokenError("invalid_signature", "No configured public key has the token's key id (%v).", header["kid"])
	}
	if !ed25519.Verify(key, []byte(token[:len(encodedHeader)+1+len(encodedPayload)]), signature) {
		return nil, tokenError("invalid_signature", "The token signature does not verify with the product key.")
	}
	claims, ok := parseObject(payloadBytes)
	if !ok {
		return nil, tokenError("malformed", "The token payload is not a JSON object.")
	}
	now := options.Now
	if now.IsZero() {
		now = time.Now()
	}
	if err := checkClaims(claims, options.ProductID, math.Floor(float64(now.UnixMilli())/1000), options.ClockTolerance.Seconds()); err != nil {
		return nil, err
	}
	if !hasLicenseClaims(claims) || claims["productId"] != options.ProductID || claims["sub"] != claims["licenseId"] {
		return nil, tokenError("malformed", "The token does not carry license claims.")
	}
	bound, _ := claims["fingerprint"].(string)
	if options.Fingerprint != "" && (!isString(claims["fingerprint"]) || bound != options.Fingerprint) {
		return nil, tokenError("fingerprint_mismatch", "The token is bound to another machine, or to none.")
	}
	entitlements := []string{}
	if list, isList := claims["entitlements"].([]any); isList {
		for _, code := range list {
			entitlements = append(entitlements, code.(string))
		}
	}
	var missing []string
	for _, required := range options.RequireEntitlements {
		if !contains(entitlements, required) {
			missing = append(missing, required)
		}
	}
	if len(missing) > 0 {
		plural := ""
		if len(missing) > 1 {
			plural = "s"
		}
		return nil, tokenError("entitlements_missing", "The license does not carry the entitlement%s %s.", plural, strings.Join(missing, ", "))
	}
	customFields, _ := claims["customFields"].(map[string]any)
	if customFields == nil {
		customFields = map[string]any{}
	}
	return &OfflineValidationResult{
		LicenseID:    claims["licenseId"].(string),
		ExpiresAt:    claims["expirationDate"].(string),
		ProductID:    claims["productId"].(string),
		CustomFields: customFields,
		IssuedAt:     claims["createdAt"].(string),
		Fingerprint:  bound,
		Entitlements: entitlements,
	}, nil
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func contains(list []string, value string) bool {
	for _, item := range list {
		if item == value {
			return true
		}
	}
	return false
}
