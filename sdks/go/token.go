package keyturn

import (
	"bytes"
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
	ExpiresAt string `json:"expiresAt"`
	ProductID string `json:"productId"`
	// CustomFields is the token's custom JSON object as signed (`{}` when it has none): unmarshal
	// it into a type of your own.
	CustomFields json.RawMessage `json:"customFields"`
	// IssuedAt is when the token was issued (ISO 8601).
	IssuedAt string `json:"issuedAt"`
	// Fingerprint is the machine the token is bound to, empty when it is not bound.
	Fingerprint  string   `json:"fingerprint,omitempty"`
	Entitlements []string `json:"entitlements"`
	// CheckInBy is when the application must next validate online (ISO 8601); empty: no check-in
	// required.
	CheckInBy string `json:"checkInBy,omitempty"`
	// GracePeriod is the seconds of grace after CheckInBy the license's policy allows; nil when it
	// sets none.
	GracePeriod *int64 `json:"gracePeriod,omitempty"`
}

// gracePeriodOf reads a gracePeriod: a whole number of seconds, at least 0.
func gracePeriodOf(raw json.RawMessage) (*int64, bool) {
	if raw == nil {
		return nil, true
	}
	value, ok := jsonNumber(raw)
	if !ok || value != math.Trunc(value) || value < 0 || value > math.MaxInt32 {
		return nil, false
	}
	seconds := int64(value)
	return &seconds, true
}

func tokenError(code, format string, args ...any) *TokenError {
	return &TokenError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// decodeCanonical accepts only canonical base64url: no padding, unused bits zero. The strict
// decoder refuses every other character but the new lines it skips.
func decodeCanonical(part string) ([]byte, bool) {
	if strings.ContainsAny(part, "\r\n") {
		return nil, false
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

var dateTimePattern = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$`)

var daysInMonth = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// isDateTime is an RFC 3339 date-time, as the JSON Schema date-time format reads it.
func isDateTime(value string) bool {
	m := dateTimePattern.FindStringSubmatch(value)
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

// claimSet holds each claim's JSON as signed: nil when absent, `null` when null. Decoding into a
// struct keeps the check's cost near a bare signature verify (a map of every value costs a fifth
// more); the claims are read only after the signature verified, so they were written by the server.
type claimSet struct {
	LicenseID      json.RawMessage `json:"licenseId"`
	ProductID      json.RawMessage `json:"productId"`
	ExpirationDate json.RawMessage `json:"expirationDate"`
	CreatedAt      json.RawMessage `json:"createdAt"`
	CustomFields   json.RawMessage `json:"customFields"`
	Fingerprint    json.RawMessage `json:"fingerprint"`
	Entitlements   json.RawMessage `json:"entitlements"`
	CheckInBy      json.RawMessage `json:"checkInBy"`
	GracePeriod    json.RawMessage `json:"gracePeriod"`
	Iss            json.RawMessage `json:"iss"`
	Sub            json.RawMessage `json:"sub"`
	Aud            json.RawMessage `json:"aud"`
	Iat            json.RawMessage `json:"iat"`
	Nbf            json.RawMessage `json:"nbf"`
	Exp            json.RawMessage `json:"exp"`
	Jti            json.RawMessage `json:"jti"`
}

// text is a JSON string's value.
func text(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true // no escapes: the JSON was validated whole
	}
	var value string
	return value, json.Unmarshal(raw, &value) == nil
}

// jsonNumber is a JSON number's value (the whole payload was checked to be valid JSON).
func jsonNumber(raw json.RawMessage) (float64, bool) {
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil && !math.IsInf(f, 0)
}

func jsonInteger(raw json.RawMessage) bool {
	f, ok := jsonNumber(raw)
	return ok && f == math.Trunc(f)
}

func isID(raw json.RawMessage, prefix string) bool {
	value, ok := text(raw)
	return ok && strings.HasPrefix(value, prefix) && len(value) <= 64
}

func isText(raw json.RawMessage) bool {
	_, ok := text(raw)
	return ok
}

func isString(value any) bool {
	_, ok := value.(string)
	return ok
}

func dateTime(raw json.RawMessage) bool {
	value, ok := text(raw)
	return ok && isDateTime(value)
}

// entitlementList is the entitlements claim as a list of strings.
func entitlementList(raw json.RawMessage) ([]string, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var list []string
	return list, json.Unmarshal(raw, &list) == nil
}

// hasLicenseClaims checks the claims' schema: the license's fields and the registered claims.
func hasLicenseClaims(claims *claimSet) bool {
	if claims.CustomFields != nil && claims.CustomFields[0] != '{' {
		return false
	}
	if claims.Fingerprint != nil && !isText(claims.Fingerprint) {
		return false
	}
	if _, ok := entitlementList(claims.Entitlements); claims.Entitlements != nil && !ok {
		return false
	}
	if claims.Nbf != nil && !jsonInteger(claims.Nbf) {
		return false
	}
	if claims.CheckInBy != nil && !dateTime(claims.CheckInBy) {
		return false
	}
	if _, ok := gracePeriodOf(claims.GracePeriod); claims.GracePeriod != nil && !ok {
		return false
	}
	return isID(claims.LicenseID, "lic_") && isID(claims.ProductID, "prd_") &&
		dateTime(claims.ExpirationDate) && dateTime(claims.CreatedAt) &&
		isText(claims.Iss) && isID(claims.Sub, "lic_") && isID(claims.Aud, "prd_") &&
		jsonInteger(claims.Iat) && jsonInteger(claims.Exp) && isText(claims.Jti)
}

func checkCritical(header map[string]any) error {
	crit, present := header["crit"]
	if !present {
		return nil
	}
	list, ok := crit.([]any)
	valid := ok && len(list) > 0
	for _, name := range list {
		if value, isValue := name.(string); !isValue || value == "" {
			valid = false
		}
	}
	if !valid {
		return tokenError("malformed", `The token header "crit" must be a list of names.`)
	}
	return tokenError("unsupported_algorithm", "The token requires an extension that is not supported.")
}

func checkClaims(claims *claimSet, productID string, now, tolerance float64) error {
	for _, claim := range []struct {
		name  string
		value json.RawMessage
	}{{"exp", claims.Exp}, {"iat", claims.Iat}, {"sub", claims.Sub}, {"jti", claims.Jti}} {
		if claim.value == nil {
			return tokenError("malformed", `The token lacks the "%s" claim.`, claim.name)
		}
	}
	if iss, ok := text(claims.Iss); !ok || iss != licenseTokenIssuer {
		return tokenError("malformed", "The token is not issued by Keyturn.")
	}
	if !isText(claims.Sub) {
		return tokenError("malformed", `The token "sub" claim must be a string.`)
	}
	found := false
	if aud, ok := text(claims.Aud); ok {
		found = aud == productID
	} else if len(claims.Aud) > 0 && claims.Aud[0] == '[' {
		var audiences []any
		_ = json.Unmarshal(claims.Aud, &audiences)
		for _, audience := range audiences {
			if value, isValue := audience.(string); isValue && value == productID {
				found = true
			}
		}
	}
	if !found {
		return tokenError("product_mismatch", "The token is for another product.")
	}
	if _, ok := jsonNumber(claims.Iat); !ok {
		return tokenError("malformed", `The token "iat" claim must be a number.`)
	}
	if claims.Nbf != nil {
		if value, ok := jsonNumber(claims.Nbf); !ok || value > now+tolerance {
			return tokenError("not_yet_valid", "The token is not valid yet; check the clock.")
		}
	}
	exp, ok := jsonNumber(claims.Exp)
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
	var claims claimSet
	if len(payloadBytes) == 0 || payloadBytes[0] != '{' || json.Unmarshal(payloadBytes, &claims) != nil {
		return nil, tokenError("malformed", "The token payload is not a JSON object.")
	}
	now := options.Now
	if now.IsZero() {
		now = time.Now()
	}
	if err := checkClaims(&claims, options.ProductID, math.Floor(float64(now.UnixMilli())/1000), options.ClockTolerance.Seconds()); err != nil {
		return nil, err
	}
	licenseID, _ := text(claims.LicenseID)
	productID, _ := text(claims.ProductID)
	sub, _ := text(claims.Sub)
	if !hasLicenseClaims(&claims) || productID != options.ProductID || sub != licenseID {
		return nil, tokenError("malformed", "The token does not carry license claims.")
	}
	bound, _ := text(claims.Fingerprint)
	if options.Fingerprint != "" && (claims.Fingerprint == nil || bound != options.Fingerprint) {
		return nil, tokenError("fingerprint_mismatch", "The token is bound to another machine, or to none.")
	}
	entitlements, _ := entitlementList(claims.Entitlements)
	if entitlements == nil {
		entitlements = []string{}
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
	customFields := claims.CustomFields
	if customFields == nil {
		customFields = json.RawMessage("{}")
	}
	expiresAt, _ := text(claims.ExpirationDate)
	issuedAt, _ := text(claims.CreatedAt)
	checkInBy, _ := text(claims.CheckInBy)
	gracePeriod, _ := gracePeriodOf(claims.GracePeriod)
	return &OfflineValidationResult{
		LicenseID:    licenseID,
		ExpiresAt:    expiresAt,
		ProductID:    productID,
		CustomFields: customFields,
		IssuedAt:     issuedAt,
		Fingerprint:  bound,
		Entitlements: entitlements,
		CheckInBy:    checkInBy,
		GracePeriod:  gracePeriod,
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
