package keyturn

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// MaxLicenseFileLength is the longest license file accepted; longer ones are refused unparsed.
const MaxLicenseFileLength = 64 * 1024

const (
	licenseFileFormat        = "keyturn-license-file/1"
	licenseFileBegin         = "-----BEGIN KEYTURN LICENSE FILE-----"
	licenseFileEnd           = "-----END KEYTURN LICENSE FILE-----"
	licenseFileKdfInfo       = "keyturn-license-file/1 aes-256-gcm"
	minLicenseFileIterations = 100_000
	maxLicenseFileIterations = 10_000_000
)

// LicenseFileOptions says what a license file must be to be valid, and how to read it.
type LicenseFileOptions struct {
	// PublicKeyPEM is the product's public key: PEM (SPKI), or a JWK's JSON.
	PublicKeyPEM string
	// PublicKeys are more keys (a retired one after a rotation), tried like PublicKeyPEM.
	PublicKeys []string
	// ProductID is the product the file must be for.
	ProductID string
	// LicenseKey is needed to read an encrypted file.
	LicenseKey string
	// Fingerprint, when not empty, is this machine's fingerprint: the file must be bound to it, and
	// an encrypted machine file cannot be read without it.
	Fingerprint string
	// Now is the time to judge the file's lifetime at; the zero time means time.Now().
	Now time.Time
	// ClockTolerance is the accepted clock skew (default 0, at most an hour).
	ClockTolerance time.Duration
	// RequireEntitlements are entitlement codes the license must carry.
	RequireEntitlements []string
}

// LicenseFileLicense is what a license file says of the license.
type LicenseFileLicense struct {
	ID             string          `json:"id"`
	Status         string          `json:"status"`
	ExpirationDate *string         `json:"expirationDate"`
	Policy         *string         `json:"policy"`
	Entitlements   []string        `json:"entitlements"`
	MaxActivations *int64          `json:"maxActivations"`
	MaxUses        *int64          `json:"maxUses"`
	Uses           int64           `json:"uses"`
	Metadata       json.RawMessage `json:"metadata,omitempty"`
}

// LicenseFileResult is what a valid license file says (the JavaScript client's result).
type LicenseFileResult struct {
	LicenseID string `json:"licenseId"`
	ProductID string `json:"productId"`
	// ExpiresAt is when the file expires (ISO 8601); nil: never.
	ExpiresAt *string `json:"expiresAt"`
	// IssuedAt is when the file was issued (ISO 8601).
	IssuedAt string `json:"issuedAt"`
	// CustomFields is always `{}`: license files carry no custom payload.
	CustomFields json.RawMessage `json:"customFields"`
	// Fingerprint and ActivationID name the machine the file is bound to; empty when it is not.
	Fingerprint  string `json:"fingerprint,omitempty"`
	ActivationID string `json:"activationId,omitempty"`
	// DeactivationSecret, in a file from offline activation, keys this machine's deactivation
	// codes (CreateDeactivationCode). Keep it with the file; never show it. Empty otherwise.
	DeactivationSecret string             `json:"deactivationSecret,omitempty"`
	Entitlements       []string           `json:"entitlements"`
	License            LicenseFileLicense `json:"license"`
	// KeyID is the signing key's id.
	KeyID     string `json:"keyId"`
	Encrypted bool   `json:"encrypted"`
	// CheckInBy is when the application must next validate online (ISO 8601); empty: no check-in
	// required.
	CheckInBy string `json:"checkInBy,omitempty"`
	// GracePeriod is the seconds of grace after CheckInBy the license's policy allows; nil when it
	// sets none.
	GracePeriod *int64 `json:"gracePeriod,omitempty"`
}

// LicenseFileError says why a license file is not to be trusted, or cannot be read: Code is one
// of the TokenError codes, or unknown_key or decryption_failed.
type LicenseFileError struct {
	Code    string
	Message string
}

func (e *LicenseFileError) Error() string { return "keyturn: " + e.Code + ": " + e.Message }

func fileError(code, format string, args ...any) error {
	return &LicenseFileError{Code: code, Message: fmt.Sprintf(format, args...)}
}

type licenseFileEncryption struct {
	Alg          *string `json:"alg"`
	Kdf          *string `json:"kdf"`
	Iterations   *int64  `json:"iterations"`
	Salt         *string `json:"salt"`
	IV           *string `json:"iv"`
	MachineBound *bool   `json:"machineBound"`
}

type licenseFileHeader struct {
	Format     *string                `json:"format"`
	Alg        *string                `json:"alg"`
	Kid        *string                `json:"kid"`
	ProductID  *string                `json:"productId"`
	KeyFormat  *string                `json:"keyFormat"`
	Issued     *string                `json:"issued"`
	Expiry     json.RawMessage        `json:"expiry"`
	Encryption *licenseFileEncryption `json:"encryption"`
}

type licenseFileMachine struct {
	ActivationID *string `json:"activationId"`
	Fingerprint  *string `json:"fingerprint"`
	Secret       *string `json:"secret"`
}

type licenseFilePayload struct {
	License     *json.RawMessage    `json:"license"`
	Machine     *licenseFileMachine `json:"machine"`
	CheckInBy   *string             `json:"checkInBy"`
	GracePeriod json.RawMessage     `json:"gracePeriod"`
}

var (
	fileTime   = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$`)
	keyturnKey = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{25}$`)
)

// fullUpperCase are the characters whose full Unicode upper case (JavaScript's toUpperCase) is
// ASCII but differs from Go's simple mapping (unicode.ToUpper): only these can make a key Keyturn's.
var fullUpperCase = map[rune]string{
	'ß': "SS", 'ﬀ': "FF", 'ﬁ': "FI", 'ﬂ': "FL", 'ﬃ': "FFI", 'ﬄ': "FFL", 'ﬅ': "ST", 'ﬆ': "ST",
}

// isKeySeparator is JavaScript's \s (unicode.IsSpace differs: it has U+0085 and lacks U+FEFF),
// and the dash.
func isKeySeparator(r rune) bool {
	switch r {
	case '-', '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// CanonicalLicenseKey is a Keyturn-made key as stored: upper case (full Unicode case mapping, as
// JavaScript's: ß is SS), whitespace and dashes removed, O read as 0, I and L as 1, five groups of
// five. Input not shaped like such a key is returned unchanged.
func CanonicalLicenseKey(key string) string {
	var upper strings.Builder
	for _, r := range key {
		if isKeySeparator(r) {
			continue
		}
		if full, ok := fullUpperCase[r]; ok {
			upper.WriteString(full)
		} else {
			upper.WriteRune(unicode.ToUpper(r))
		}
	}
	characters := strings.NewReplacer("O", "0", "I", "1", "L", "1").Replace(upper.String())
	if !keyturnKey.MatchString(characters) {
		return key
	}
	return characters[0:5] + "-" + characters[5:10] + "-" + characters[10:15] + "-" + characters[15:20] + "-" + characters[20:25]
}

// strictDecode reads JSON into out, refusing unknown fields and trailing data.
func strictDecode(data []byte, out any) bool {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if decoder.Decode(out) != nil {
		return false
	}
	return !decoder.More()
}

func fileTimeOf(value string) (time.Time, bool) {
	if len(value) > 32 || !fileTime.MatchString(value) {
		return time.Time{}, false
	}
	parsed, err := time.Parse(time.RFC3339Nano, value)
	return parsed, err == nil
}

func within(value *string, low, high int) bool {
	return value != nil && len(*value) >= low && len(*value) <= high
}

func readFileHeader(data []byte) (*licenseFileHeader, *string, bool) {
	var header licenseFileHeader
	if !strictDecode(data, &header) || header.Format == nil || *header.Format != licenseFileFormat ||
		header.Alg == nil || !within(header.Kid, 1, 128) || !within(header.ProductID, 1, 64) ||
		header.KeyFormat == nil || (*header.KeyFormat != "keyturn" && *header.KeyFormat != "custom") ||
		header.Issued == nil || header.Expiry == nil {
		return nil, nil, false
	}
	if _, ok := fileTimeOf(*header.Issued); !ok {
		return nil, nil, false
	}
	var expiry *string
	if string(header.Expiry) != "null" {
		var text string
		if json.Unmarshal(header.Expiry, &text) != nil {
			return nil, nil, false
		}
		if _, ok := fileTimeOf(text); !ok {
			return nil, nil, false
		}
		expiry = &text
	}
	if e := header.Encryption; e != nil {
		if e.Alg == nil || *e.Alg != "A256GCM" || e.Kdf == nil || (*e.Kdf != "HKDF-SHA256" && *e.Kdf != "PBKDF2-SHA256") ||
			!within(e.Salt, 22, 22) || !within(e.IV, 16, 16) || e.MachineBound == nil {
			return nil, nil, false
		}
	}
	return &header, expiry, true
}

func readFileLicense(data []byte) (*LicenseFileLicense, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return nil, false
	}
	for _, required := range []string{"id", "status", "expirationDate", "policy", "entitlements", "maxActivations", "maxUses", "uses"} {
		if _, ok := fields[required]; !ok {
			return nil, false
		}
	}
	var license LicenseFileLicense
	if !strictDecode(data, &license) || len(license.ID) < 1 || len(license.ID) > 64 || len(license.Status) > 32 ||
		license.Entitlements == nil ||
		(license.ExpirationDate != nil && len(*license.ExpirationDate) > 32) ||
		(license.Policy != nil && len(*license.Policy) > 256) {
		return nil, false
	}
	if metadata, ok := fields["metadata"]; ok && (len(metadata) == 0 || metadata[0] != '{') {
		return nil, false
	}
	for _, code := range license.Entitlements {
		if len(code) > 256 {
			return nil, false
		}
	}
	return &license, true
}

// hkdfSHA256 is RFC 5869 HKDF with SHA-256, for one 32-byte output block.
func hkdfSHA256(secret, salt, info []byte) []byte {
	extract := hmac.New(sha256.New, salt)
	extract.Write(secret)
	expand := hmac.New(sha256.New, extract.Sum(nil))
	expand.Write(info)
	expand.Write([]byte{1})
	return expand.Sum(nil)
}

// pbkdf2SHA256 is RFC 8018 PBKDF2 with HMAC-SHA-256, for one 32-byte output block.
func pbkdf2SHA256(password, salt []byte, iterations int) []byte {
	mac := hmac.New(sha256.New, password)
	block := make([]byte, 4)
	binary.BigEndian.PutUint32(block, 1)
	mac.Write(salt)
	mac.Write(block)
	u := mac.Sum(nil)
	out := append([]byte(nil), u...)
	for i := 1; i < iterations; i++ {
		mac.Reset()
		mac.Write(u)
		u = mac.Sum(u[:0])
		for j := range out {
			out[j] ^= u[j]
		}
	}
	return out
}

func decryptFile(header *licenseFileHeader, encodedHeader string, ciphertext []byte, options LicenseFileOptions) ([]byte, error) {
	e := header.Encryption
	if options.LicenseKey == "" {
		return nil, fileError("decryption_failed", "The file is encrypted: give the license key to read it.")
	}
	if *e.MachineBound && options.Fingerprint == "" {
		return nil, fileError("decryption_failed", "The file is encrypted for a machine: give this machine's fingerprint to read it.")
	}
	key := options.LicenseKey
	if *header.KeyFormat == "keyturn" {
		key = CanonicalLicenseKey(key)
	}
	material := key
	if *e.MachineBound {
		material = key + "\n" + options.Fingerprint
	}
	salt, saltErr := base64.RawURLEncoding.DecodeString(*e.Salt)
	iv, ivErr := base64.RawURLEncoding.DecodeString(*e.IV)
	if saltErr != nil || ivErr != nil || len(salt) != 16 || len(iv) != 12 {
		return nil, fileError("malformed", "The file encryption needs a 16-byte salt and a 12-byte iv.")
	}
	var secret []byte
	if *e.Kdf == "HKDF-SHA256" {
		secret = hkdfSHA256([]byte(material), salt, []byte(licenseFileKdfInfo))
	} else {
		if e.Iterations == nil || *e.Iterations < minLicenseFileIterations || *e.Iterations > maxLicenseFileIterations {
			return nil, fileError("malformed", "PBKDF2 needs from %d to %d iterations.", minLicenseFileIterations, maxLicenseFileIterations)
		}
		secret = pbkdf2SHA256([]byte(material), salt, int(*e.Iterations))
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	clear, err := gcm.Open(nil, iv, ciphertext, []byte(encodedHeader))
	if err != nil {
		return nil, fileError("decryption_failed", "The file could not be decrypted: another license key, or (for a machine file) another machine.")
	}
	return clear, nil
}

// VerifyLicenseFile verifies a license file offline, with no network: the same checks, in the
// same order and with the same error codes as the JavaScript client's verifyLicenseFile. It
// returns what the file says, or a *LicenseFileError whose Code says why (use errors.As).
func VerifyLicenseFile(file string, options LicenseFileOptions) (*LicenseFileResult, error) {
	// The clock options first: an invalid one must never widen what is accepted.
	if options.ClockTolerance < 0 || options.ClockTolerance > MaxClockTolerance {
		return nil, fmt.Errorf("keyturn: ClockTolerance must be from 0 to %s", MaxClockTolerance)
	}
	now := options.Now
	if now.IsZero() {
		now = time.Now()
	}
	if len(file) > MaxLicenseFileLength {
		return nil, fileError("malformed", "A license file is text of at most %d characters.", MaxLicenseFileLength)
	}
	text := strings.TrimSpace(file)
	if !strings.HasPrefix(text, licenseFileBegin) || !strings.HasSuffix(text, licenseFileEnd) || len(text) < len(licenseFileBegin)+len(licenseFileEnd) {
		return nil, fileError("malformed", "A license file starts with %s and ends with %s.", licenseFileBegin, licenseFileEnd)
	}
	body := strings.Join(strings.Fields(text[len(licenseFileBegin):len(text)-len(licenseFileEnd)]), "")
	parts := strings.Split(body, ".")
	if len(parts) != 3 {
		return nil, fileError("malformed", "A license file body is three dot-separated base64url parts.")
	}
	decoded := make([][]byte, 3)
	for i, part := range parts {
		// The raw URL alphabet, no padding: DecodeString refuses anything else.
		bytes, err := base64.RawURLEncoding.DecodeString(part)
		if len(part) == 0 || err != nil {
			return nil, fileError("malformed", "A license file body is three dot-separated base64url parts.")
		}
		decoded[i] = bytes
	}
	encodedHeader, encodedPayload := parts[0], parts[1]
	if len(decoded[2]) != ed25519.SignatureSize {
		return nil, fileError("malformed", "A license file signature is 64 bytes (Ed25519).")
	}
	header, expiry, ok := readFileHeader(decoded[0])
	if !ok {
		return nil, fileError("malformed", "The file header is not a Keyturn license-file header.")
	}
	if *header.Alg != "EdDSA" {
		return nil, fileError("unsupported_algorithm", "Only EdDSA files are accepted, not %s.", *header.Alg)
	}
	keys, err := keyList(append([]string{options.PublicKeyPEM}[:boolInt(options.PublicKeyPEM != "")], options.PublicKeys...))
	if err != nil {
		return nil, err
	}
	var key ed25519.PublicKey
	for _, candidate := range keys {
		if candidate.kid == *header.Kid {
			key = candidate.key
			break
		}
	}
	if key == nil {
		return nil, fileError("unknown_key", "No configured public key has the file's key id (%s).", *header.Kid)
	}
	if !ed25519.Verify(key, []byte(encodedHeader+"."+encodedPayload), decoded[2]) {
		return nil, fileError("invalid_signature", "The file signature does not verify with the product key.")
	}
	if *header.ProductID != options.ProductID {
		return nil, fileError("product_mismatch", "The file is for another product.")
	}
	issued, _ := fileTimeOf(*header.Issued)
	if issued.After(now.Add(options.ClockTolerance)) {
		return nil, fileError("not_yet_valid", "The file is not valid yet; check the clock.")
	}
	if expiry != nil {
		ends, _ := fileTimeOf(*expiry)
		if !ends.After(now.Add(-options.ClockTolerance)) {
			return nil, fileError("expired", "The file has expired.")
		}
	}
	clear := decoded[1]
	if header.Encryption != nil {
		if clear, err = decryptFile(header, encodedHeader, decoded[1], options); err != nil {
			return nil, err
		}
	}
	var payload licenseFilePayload
	if !strictDecode(clear, &payload) || payload.License == nil {
		return nil, fileError("malformed", "The file payload is not a license.")
	}
	license, ok := readFileLicense(*payload.License)
	machine := payload.Machine
	if payload.CheckInBy != nil {
		if _, isTime := fileTimeOf(*payload.CheckInBy); !isTime {
			ok = false
		}
	}
	gracePeriod, graceOK := gracePeriodOf(payload.GracePeriod)
	ok = ok && graceOK
	if !ok || (machine != nil && (!within(machine.ActivationID, 1, 64) || !within(machine.Fingerprint, 1, 256) ||
		(machine.Secret != nil && len(*machine.Secret) != 43))) {
		return nil, fileError("malformed", "The file payload is not a license.")
	}
	if options.Fingerprint != "" && (machine == nil || *machine.Fingerprint != options.Fingerprint) {
		return nil, fileError("fingerprint_mismatch", "The file is bound to another machine, or to none.")
	}
	var missing []string
	for _, code := range options.RequireEntitlements {
		if !contains(license.Entitlements, code) {
			missing = append(missing, code)
		}
	}
	if len(missing) > 0 {
		plural := ""
		if len(missing) > 1 {
			plural = "s"
		}
		return nil, fileError("entitlements_missing", "The license does not carry the entitlement%s %s.", plural, strings.Join(missing, ", "))
	}
	result := &LicenseFileResult{
		LicenseID:    license.ID,
		ProductID:    *header.ProductID,
		ExpiresAt:    expiry,
		IssuedAt:     *header.Issued,
		CustomFields: json.RawMessage(`{}`),
		Entitlements: license.Entitlements,
		License:      *license,
		KeyID:        *header.Kid,
		Encrypted:    header.Encryption != nil,
		GracePeriod:  gracePeriod,
	}
	if payload.CheckInBy != nil {
		result.CheckInBy = *payload.CheckInBy
	}
	if machine != nil {
		result.Fingerprint, result.ActivationID = *machine.Fingerprint, *machine.ActivationID
		if machine.Secret != nil {
			result.DeactivationSecret = *machine.Secret
		}
	}
	return result, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
