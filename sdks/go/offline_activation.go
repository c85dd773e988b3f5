package keyturn

// Offline activation on the machine (docs/guides/offline.md, "Air-gapped machines"): the
// activation request file it hands to the vendor, and the deactivation code it prints when it
// gives its seat back. Byte for byte what the JavaScript client's createActivationRequest and
// createDeactivationCode write (conformance/vectors.json).

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	activationRequestFormat = "keyturn-activation-request/1"
	activationRequestBegin  = "-----BEGIN KEYTURN ACTIVATION REQUEST-----"
	activationRequestEnd    = "-----END KEYTURN ACTIVATION REQUEST-----"
	activationRequestLine   = 64
	keyHintBytes            = 12
	deactivationCodeContext = "keyturn-deactivation-code/1"
	deactivationCodeMac     = 6
	deactivationCodeGroup   = 4
	crockfordAlphabet       = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)

var deactivationSecretText = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// InvalidOptionError is an option of CreateActivationRequest or CreateDeactivationCode that is
// invalid (a programming error in the caller): nothing is written rather than a file or code the
// server would refuse or read differently. Option names the field.
type InvalidOptionError struct {
	Option  string
	Message string
}

func (e *InvalidOptionError) Error() string { return "keyturn: " + e.Option + ": " + e.Message }

// ActivationRequestOptions says what an activation request file asks for.
type ActivationRequestOptions struct {
	// LicenseKey is the key the user entered: a Keyturn key in any spelling, a custom key exactly.
	LicenseKey string
	ProductID  string
	// Fingerprint is this machine's (MachineFingerprint).
	Fingerprint string
	// Name is the activation's name, e.g. the host name (at most 200 characters); empty: none.
	Name string
	// Platform is stored as the activation's metadata.platform, e.g. linux-x64 (at most 100
	// characters); empty: none.
	Platform string
	// Now is the request's time; the zero time means time.Now().
	Now time.Time
}

// activationRequestFields are a request's fields once the nonce and time are fixed.
type activationRequestFields struct {
	ProductID, Fingerprint, Name, Platform, Nonce, Created string
}

// CreateActivationRequest writes an activation request file for a machine without a network: the
// text to hand to the vendor (keyturn offline activate, the dashboard, POST
// /licenses/activate-offline), who answers with the machine's license file. It holds no license
// key: an HMAC keyed by it proves the key. Invalid options give an *InvalidOptionError.
func CreateActivationRequest(options ActivationRequestOptions) (string, error) {
	created, err := isoMilliseconds(options.Now)
	if err != nil {
		return "", err
	}
	checks := []struct {
		option, value string
		max           int
		optional      bool
	}{
		{"ProductID", options.ProductID, 64, false},
		{"Fingerprint", options.Fingerprint, 256, false},
		{"Name", options.Name, 200, true},
		{"Platform", options.Platform, 100, true},
		{"LicenseKey", options.LicenseKey, 256, false},
	}
	for _, check := range checks {
		if check.optional && check.value == "" {
			continue
		}
		if err := requireText(check.option, check.value, check.max); err != nil {
			return "", err
		}
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("keyturn: no randomness for the request's nonce: %w", err)
	}
	return encodeActivationRequest(options.LicenseKey, activationRequestFields{
		ProductID:   options.ProductID,
		Fingerprint: options.Fingerprint,
		Name:        options.Name,
		Platform:    options.Platform,
		Nonce:       base64.RawURLEncoding.EncodeToString(nonce),
		Created:     created,
	}), nil
}

// encodeActivationRequest is the request file for these fields (the conformance vectors fix the
// nonce and time).
func encodeActivationRequest(licenseKey string, fields activationRequestFields) string {
	key := []byte(CanonicalLicenseKey(licenseKey))
	hint := sha256.Sum256(key)
	var payload strings.Builder
	member := func(name, value string) {
		if payload.Len() > 0 {
			payload.WriteByte(',')
		}
		payload.WriteString(jsString(name) + ":" + jsString(value))
	}
	member("format", activationRequestFormat)
	member("productId", fields.ProductID)
	member("keyHint", base64.RawURLEncoding.EncodeToString(hint[:keyHintBytes]))
	member("fingerprint", fields.Fingerprint)
	if fields.Name != "" {
		member("name", fields.Name)
	}
	if fields.Platform != "" {
		member("platform", fields.Platform)
	}
	member("nonce", fields.Nonce)
	member("created", fields.Created)
	signedPart := base64.RawURLEncoding.EncodeToString([]byte("{" + payload.String() + "}"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signedPart))
	body := signedPart + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	lines := []string{activationRequestBegin}
	for len(body) > activationRequestLine {
		lines = append(lines, body[:activationRequestLine])
		body = body[activationRequestLine:]
	}
	lines = append(lines, body, activationRequestEnd)
	return strings.Join(lines, "\n") + "\n"
}

// jsString is a string as JavaScript's JSON.stringify writes it: non-ASCII as UTF-8, and only ",
// \ and control characters escaped (\b \f \n \r \t, else \u00xx). encoding/json differs: it
// escapes <, >, &, U+2028 and U+2029, and writes \b and \f as \u0008 and \u000c before Go 1.22.
func jsString(text string) string {
	var out strings.Builder
	out.WriteByte('"')
	for _, r := range text {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&out, `\u%04x`, r)
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
	return out.String()
}

// requireText refuses a value that is empty, not UTF-8, or longer than max UTF-16 code units
// (the length the JavaScript client checks).
func requireText(option, value string, max int) error {
	if !utf8.ValidString(value) {
		return &InvalidOptionError{option, "must be UTF-8 text"}
	}
	units := 0
	for _, r := range value {
		units++
		if r >= 0x10000 {
			units++
		}
	}
	if units < 1 || units > max {
		return &InvalidOptionError{option, fmt.Sprintf("must be 1 to %d characters", max)}
	}
	return nil
}

// milliseconds is now (the zero time: the current time) in whole milliseconds since the epoch,
// rounded down as a JavaScript Date holds it; years 1 to 9999 only.
func milliseconds(now time.Time) (int64, error) {
	if now.IsZero() {
		now = time.Now()
	}
	if year := now.UTC().Year(); year < 1 || year > 9999 {
		return 0, &InvalidOptionError{"Now", "must be a time in the years 1 to 9999"}
	}
	return now.UnixMilli(), nil
}

// isoMilliseconds is YYYY-MM-DDTHH:MM:SS.sssZ, as JavaScript's toISOString writes it.
func isoMilliseconds(now time.Time) (string, error) {
	ms, err := milliseconds(now)
	if err != nil {
		return "", err
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"), nil
}

// DeactivationCodeOptions says which machine gives its seat back.
type DeactivationCodeOptions struct {
	// ActivationID is VerifyLicenseFile's ActivationID.
	ActivationID string
	// Secret is VerifyLicenseFile's DeactivationSecret: only files from offline activation carry one.
	Secret string
	// Now is the code's time; the zero time means time.Now().
	Now time.Time
}

// CreateDeactivationCode is the code that proves to the vendor that this machine gave its seat
// back: its time (to the minute) and an HMAC of the activation id and that time under the
// machine's deactivation secret, as 16 characters in groups of four (Q2M4-7XKD-3H9P-T6WB) for
// reading over the phone. Delete the machine's license file before showing it. Invalid options
// (a time before 1970, a secret that is not 43 base64url characters) give an *InvalidOptionError.
func CreateDeactivationCode(options DeactivationCodeOptions) (string, error) {
	ms, err := milliseconds(options.Now)
	if err != nil || ms < 0 {
		return "", &InvalidOptionError{"Now", "must be a time in the years 1970 to 9999"}
	}
	minute := ms / 60_000 // below 1<<32 until the year 10136
	if err := requireText("ActivationID", options.ActivationID, 64); err != nil {
		return "", err
	}
	if !deactivationSecretText.MatchString(options.Secret) {
		return "", &InvalidOptionError{"Secret", "must be the 43-character deactivation secret of a machine file"}
	}
	// Lenient about the unused low bits of the last character, as the JavaScript client is.
	key, err := base64.RawURLEncoding.DecodeString(options.Secret)
	if err != nil {
		return "", &InvalidOptionError{"Secret", "must be base64url"}
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(deactivationCodeContext + "\n" + options.ActivationID + "\n" + strconv.FormatInt(minute, 10)))
	bytes := make([]byte, 4, 4+deactivationCodeMac)
	binary.BigEndian.PutUint32(bytes, uint32(minute))
	bytes = append(bytes, mac.Sum(nil)[:deactivationCodeMac]...)
	bits := new(big.Int).SetBytes(bytes)
	characters := len(bytes) * 8 / 5
	text := make([]byte, characters)
	for i := characters - 1; i >= 0; i-- {
		text[i] = crockfordAlphabet[new(big.Int).And(bits, big.NewInt(31)).Int64()]
		bits.Rsh(bits, 5)
	}
	groups := make([]string, 0, characters/deactivationCodeGroup)
	for i := 0; i < characters; i += deactivationCodeGroup {
		groups = append(groups, string(text[i:i+deactivationCodeGroup]))
	}
	return strings.Join(groups, "-"), nil
}
