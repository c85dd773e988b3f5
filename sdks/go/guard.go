package keyturn

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
)

// GuardState is what the license guard decided.
type GuardState string

// The guard's states.
const (
	// GuardValid: the server said valid now ("online"), or it cannot be reached and the newest
	// proof is before its deadline ("offline").
	GuardValid GuardState = "valid"
	// GuardGrace: the server cannot be reached, the proof's deadline has passed and its grace
	// period has not ("check_in_overdue").
	GuardGrace GuardState = "grace"
	// GuardInvalid: anything else.
	GuardInvalid GuardState = "invalid"
)

const (
	// DefaultGuardGracePeriod is the grace after a missed check-in when the proof carries none.
	DefaultGuardGracePeriod = 3 * 24 * time.Hour
	// MaxGuardGracePeriod is the longest GracePeriod accepted: ten years (3,650 days).
	MaxGuardGracePeriod = 3650 * 24 * time.Hour
	// DefaultGuardClockTolerance is how far the clock may be behind the latest signed server time
	// before it is "clock_tampered", and how far a signed answer's time may be from it.
	DefaultGuardClockTolerance = 300 * time.Second
	// guardStoreFormat names the stored record's seal: AES-256-GCM under a key derived
	// (HKDF-SHA256) from the license key and the fingerprint, so the store reveals nothing (the
	// signed answer carries the license key) to whoever reads it without them, and opens only for
	// this license on this machine. The Python SDK writes the same.
	guardStoreFormat       = "keyturn-guard/1"
	guardStoreKDFInfo      = "keyturn-guard/1 aes-256-gcm"
	maxGuardClockTolerance = time.Hour
)

var validationReasons = map[string]bool{
	"expired": true, "revoked": true, "suspended": true, "payment_overdue": true, "not_activated": true,
	"entitlements_missing": true, "usage_exceeded": true,
}

// GuardLicense is the license as the proof the decision rests on states it.
type GuardLicense struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// ExpiresAt is when the license expires (ISO 8601); nil: never.
	ExpiresAt *string `json:"expiresAt"`
}

// GuardResult is what Check answers: the fields, states and reasons of the JavaScript client's
// guard.
//
// Reason is "online" or "offline" when valid; "check_in_overdue" in grace; when invalid, a
// validation reason from a signed answer ("expired", "revoked", "suspended", "payment_overdue",
// "not_activated", "entitlements_missing", "usage_exceeded"), "license_not_found",
// "request_refused", "grace_expired", "no_proof", "clock_tampered", "unexpected_error", or a
// license-file code of the LicenseFile option.
type GuardResult struct {
	State  GuardState `json:"state"`
	Reason string     `json:"reason"`
	// License is nil when no verified proof stands behind the decision.
	License *GuardLicense `json:"license"`
	// Entitlements are the license's entitlement codes; empty when invalid.
	Entitlements []string `json:"entitlements"`
	// ValidUntil is until when this state holds without a check-in (never past the license's
	// end); nil when invalid.
	ValidUntil *time.Time `json:"validUntil"`
}

// GuardStateChange is given to OnChange after a check whose state or reason differs from the
// previous one (and after the first).
type GuardStateChange struct {
	// Previous is nil at the first check.
	Previous *GuardResult
	Current  GuardResult
}

// GuardOptions configure a LicenseGuard.
type GuardOptions struct {
	// Client makes the online check (usually with a client API key).
	Client *Client
	// LicenseKey and ProductID name the license.
	LicenseKey string
	ProductID  string
	// PublicKeys are the product's public keys (PEM or JWK JSON): every proof must be signed by one.
	PublicKeys []string
	// Fingerprint is this machine (MachineFingerprint); validations then require it to be activated.
	Fingerprint string
	// Storage keeps the last signed answer (default: FileStorage in DefaultGuardDirectory()).
	Storage GuardStorage
	// StorageKey is the proof's key in Storage (default "keyturn-guard:" + ProductID).
	StorageKey string
	// GracePeriod is the grace after a missed check-in when the proof's policy sets none, in whole
	// seconds (zero: DefaultGuardGracePeriod; NoGracePeriod for none).
	GracePeriod   time.Duration
	NoGracePeriod bool
	// ClockTolerance is the clock drift accepted, for signed answers and the wound-back check
	// (zero: DefaultGuardClockTolerance; at most an hour).
	ClockTolerance time.Duration
	// LicenseFile is a license file (e.g. from offline activation) to fall back on when it is
	// newer than the stored answer.
	LicenseFile string
	// Now is the clock to judge at (default time.Now).
	Now func() time.Time
	// OnChange, when set, is called after a check whose state or reason differs from the previous.
	OnChange func(GuardStateChange)
}

// LicenseGuard decides whether this copy of the application is licensed, and keeps working
// offline. The rules are the JavaScript client's (createLicenseGuard):
//
// Check validates the license online with an answer signed by one of PublicKeys, judged at Now
// within ClockTolerance, and keeps that signed answer (valid or not) in Storage. When the server
// cannot be reached (a network error, a timeout, a 5xx, 408 or 429, an answer that fails its
// signature check, or ctx ending), it decides from the newest proof it has: the stored answer, or
// LicenseFile. Valid ("offline") until the proof's checkInBy (the proof's own signed time when it
// carries none), then grace ("check_in_overdue") for the proof's grace period (its policy's), else
// GracePeriod, then invalid ("grace_expired"); never past the license's expiry ("expired"). A
// store that is missing, unreadable or does not verify counts as absent ("no_proof"); a clock
// earlier than the latest signed server time the guard has seen, by more than ClockTolerance, is
// "clock_tampered". It never fails open: what the guard does not understand is invalid. Safe for
// concurrent use.
type LicenseGuard struct {
	o            GuardOptions
	gracePeriod  time.Duration
	mu           sync.Mutex
	latestSigned time.Time
	current      *GuardResult
}

// NewLicenseGuard checks the options; invalid ones are an error, before anything is checked.
func NewLicenseGuard(options GuardOptions) (*LicenseGuard, error) {
	o := options
	switch {
	case o.Client == nil:
		return nil, errors.New("keyturn: GuardOptions.Client is required")
	case o.LicenseKey == "" || len(o.LicenseKey) > 256:
		return nil, errors.New("keyturn: GuardOptions.LicenseKey must be the license key")
	case o.ProductID == "" || len(o.ProductID) > 64:
		return nil, errors.New("keyturn: GuardOptions.ProductID must be the product id")
	case len(o.PublicKeys) == 0:
		return nil, errors.New("keyturn: GuardOptions.PublicKeys needs the product's public key")
	case len(o.Fingerprint) > 256:
		return nil, errors.New("keyturn: GuardOptions.Fingerprint is at most 256 characters")
	case o.GracePeriod < 0 || o.GracePeriod > MaxGuardGracePeriod || o.GracePeriod%time.Second != 0:
		return nil, fmt.Errorf("keyturn: GuardOptions.GracePeriod must be whole seconds from 0 to %s", MaxGuardGracePeriod)
	case o.ClockTolerance < 0 || o.ClockTolerance > maxGuardClockTolerance:
		return nil, errors.New("keyturn: GuardOptions.ClockTolerance must be from 0 to an hour")
	}
	if _, err := keyList(o.PublicKeys); err != nil {
		return nil, err
	}
	grace := o.GracePeriod
	if o.NoGracePeriod {
		grace = 0
	} else if grace == 0 {
		grace = DefaultGuardGracePeriod
	}
	if o.ClockTolerance == 0 {
		o.ClockTolerance = DefaultGuardClockTolerance
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.StorageKey == "" {
		o.StorageKey = "keyturn-guard:" + o.ProductID
	}
	if o.Storage == nil {
		dir, err := DefaultGuardDirectory()
		if err != nil {
			return nil, fmt.Errorf("keyturn: no per-user folder for the guard's store (give GuardOptions.Storage): %w", err)
		}
		o.Storage = FileStorage{Dir: dir}
	}
	return &LicenseGuard{o: o, gracePeriod: grace}, nil
}

// StorageKey is the proof's key in Storage.
func (g *LicenseGuard) StorageKey() string { return g.o.StorageKey }

// Current is the last check's result; nil before the first.
func (g *LicenseGuard) Current() *GuardResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.current
}

// Forget deletes the stored proof (e.g. when the user removes the license from this machine).
func (g *LicenseGuard) Forget() error { return g.o.Storage.Delete(g.o.StorageKey) }

// Check validates (online when it can) and answers the state. The error is only for a Now that
// returned the zero time; the result is then invalid as well.
func (g *LicenseGuard) Check(ctx context.Context) (GuardResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	at := g.o.Now()
	if at.IsZero() {
		return GuardResult{State: GuardInvalid, Reason: "unexpected_error", Entitlements: []string{}},
			errors.New("keyturn: the guard's Now returned the zero time")
	}
	result, online := g.validateOnline(ctx, at)
	if !online {
		if at = g.o.Now(); at.IsZero() {
			return GuardResult{State: GuardInvalid, Reason: "unexpected_error", Entitlements: []string{}},
				errors.New("keyturn: the guard's Now returned the zero time")
		}
		result = g.fromProofs(at)
	}
	previous := g.current
	g.current = &result
	if g.o.OnChange != nil && (previous == nil || previous.State != result.State || previous.Reason != result.Reason) {
		g.o.OnChange(GuardStateChange{Previous: previous, Current: result})
	}
	return result, nil
}

// guardProof is what a verified signed answer or license file says, and when the server made it.
type guardProof struct {
	signedAt     time.Time
	isValid      bool
	reason       string
	license      GuardLicense
	entitlements []string
	checkInBy    *time.Time
	gracePeriod  *time.Duration
	// expiresAt is the proof's own end (a file's expiry); nil: none.
	expiresAt *time.Time
}

func invalidResult(reason string, license *GuardLicense) GuardResult {
	return GuardResult{State: GuardInvalid, Reason: reason, License: license, Entitlements: []string{}}
}

func proofResult(state GuardState, reason string, proof *guardProof, validUntil time.Time) GuardResult {
	license := proof.license
	return GuardResult{
		State: state, Reason: reason, License: &license, Entitlements: append([]string{}, proof.entitlements...),
		ValidUntil: &validUntil,
	}
}

// licenseEnd is when the license (or the file carrying it) ends; nil for never.
func licenseEnd(proof *guardProof) *time.Time {
	end := proof.expiresAt
	if proof.license.ExpiresAt != nil {
		if at, ok := isoTime(*proof.license.ExpiresAt); ok && (end == nil || at.Before(*end)) {
			end = &at
		}
	}
	return end
}

func earliest(at time.Time, end *time.Time) time.Time {
	if end != nil && end.Before(at) {
		return *end
	}
	return at
}

func isoTime(text string) (time.Time, bool) {
	if len(text) > 40 {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, text)
	return at, err == nil
}

func (g *LicenseGuard) raiseLatest(at time.Time) {
	if at.After(g.latestSigned) {
		g.latestSigned = at
	}
}

// Online.

// validateOnline is the online answer as a result, or false when the guard must decide from a proof.
func (g *LicenseGuard) validateOnline(ctx context.Context, at time.Time) (GuardResult, bool) {
	request := LicenseKeyRequest{Key: g.o.LicenseKey, ProductID: g.o.ProductID, Fingerprint: g.o.Fingerprint}
	signWith := signPolicy{publicKeys: g.o.PublicKeys, now: g.o.Now, tolerance: g.o.ClockTolerance}
	kept, err := g.o.Client.validateKept(ctx, request, signWith)
	if err != nil {
		var connection *ConnectionError
		var refused *APIError
		var signature *SignatureError
		switch {
		case errors.As(err, &connection) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			return GuardResult{}, false
		case errors.As(err, &refused):
			if refused.Status >= 500 || refused.Status == 408 || refused.Status == 429 {
				return GuardResult{}, false
			}
			if refused.Status == 404 && refused.Code == "license_not_found" {
				_ = g.Forget()
				return invalidResult("license_not_found", nil), true
			}
			return invalidResult("request_refused", nil), true
		case errors.As(err, &signature):
			// Verified, but signed later than this clock allows: the clock is behind the server's.
			if signature.Code == "stale" && !signature.SignedAt.IsZero() {
				g.raiseLatest(signature.SignedAt)
				if signature.SignedAt.After(at.Add(g.o.ClockTolerance)) {
					return invalidResult("clock_tampered", nil), true
				}
			}
			// Not our server's answer for this request (a captive portal, a proxy, an attacker):
			// what an attacker gets by answering is what they get by cutting the line.
			return GuardResult{}, false
		default:
			return invalidResult("unexpected_error", nil), true
		}
	}
	text, err := serializeSignedAnswer(kept.answer, kept.nonce)
	if err != nil {
		return invalidResult("unexpected_error", nil), true
	}
	proof := g.readAnswer(text)
	if proof == nil {
		return invalidResult("unexpected_error", nil), true // a checked answer that does not read back
	}
	// Kept whether valid or not: a signed "revoked" must also win offline over an older "valid".
	g.keep(text, proof.isValid)
	g.raiseLatest(proof.signedAt)
	if !proof.isValid {
		license := proof.license
		return invalidResult(proof.reason, &license), true
	}
	deadline := proof.signedAt
	if proof.checkInBy != nil {
		deadline = *proof.checkInBy
	}
	return proofResult(GuardValid, "online", proof, earliest(deadline, licenseEnd(proof))), true
}

// Offline.

func (g *LicenseGuard) fromProofs(at time.Time) GuardResult {
	proof := g.readStored()
	file, fileCode := g.readFile(at)
	if file != nil && (proof == nil || file.signedAt.After(proof.signedAt)) {
		proof = file
	}
	if proof == nil {
		if fileCode != "" {
			return invalidResult(fileCode, nil)
		}
		return invalidResult("no_proof", nil)
	}
	license := proof.license
	g.raiseLatest(proof.signedAt)
	if g.latestSigned.After(at.Add(g.o.ClockTolerance)) {
		return invalidResult("clock_tampered", &license)
	}
	if !proof.isValid {
		return invalidResult(proof.reason, &license)
	}
	end := licenseEnd(proof)
	if end != nil && !end.After(at) {
		return invalidResult("expired", &license)
	}
	deadline := proof.signedAt
	if proof.checkInBy != nil {
		deadline = *proof.checkInBy
	}
	grace := g.gracePeriod
	if proof.gracePeriod != nil {
		grace = *proof.gracePeriod
	}
	if at.Before(deadline) {
		return proofResult(GuardValid, "offline", proof, earliest(deadline, end))
	}
	if graceEnd := deadline.Add(grace); at.Before(graceEnd) {
		return proofResult(GuardGrace, "check_in_overdue", proof, earliest(graceEnd, end))
	}
	return invalidResult("grace_expired", &license)
}

type guardRecord struct {
	Answer      string  `json:"answer"`
	Fingerprint *string `json:"fingerprint"`
}

// readStored is the stored answer when it opens, verifies and is for this license, product and machine.
func (g *LicenseGuard) readStored() *guardProof {
	text, found, err := g.o.Storage.Get(g.o.StorageKey)
	if err != nil || !found {
		return nil
	}
	clear, ok := g.open(text)
	if !ok {
		return nil
	}
	var record guardRecord
	if json.Unmarshal(clear, &record) != nil || record.Answer == "" {
		return nil
	}
	if (record.Fingerprint == nil) != (g.o.Fingerprint == "") || (record.Fingerprint != nil && *record.Fingerprint != g.o.Fingerprint) {
		return nil
	}
	return g.readAnswer(record.Answer)
}

// readAnswer verifies a kept validation answer again; nil for anything that is not ours for this license.
func (g *LicenseGuard) readAnswer(text string) *guardProof {
	answer, body, signedAt, err := readSignedAnswer(text, g.o.PublicKeys)
	if err != nil || answer.Status != 200 || answer.Method != "POST" || !strings.HasSuffix(answer.Path, "/licenses/validate") {
		return nil
	}
	return g.toProof(body, signedAt)
}

func (g *LicenseGuard) toProof(body map[string]any, signedAt time.Time) *guardProof {
	isValid, hasValidity := body["isValid"].(bool)
	license, _ := body["license"].(map[string]any)
	id, hasID := license["id"].(string)
	key, hasKey := license["key"].(string)
	status, hasStatus := license["status"].(string)
	product, _ := license["productId"].(string)
	timestampText, _ := body["timestamp"].(string)
	timestamp, hasTimestamp := isoTime(timestampText)
	if !hasValidity || !hasID || !hasKey || !hasStatus || product != g.o.ProductID || !hasTimestamp ||
		(key != g.o.LicenseKey && key != CanonicalLicenseKey(g.o.LicenseKey)) {
		return nil
	}
	proof := &guardProof{signedAt: laterOf(signedAt, timestamp), isValid: isValid, license: GuardLicense{ID: id, Status: status}}
	switch expiration := license["expirationDate"].(type) {
	case nil:
	case string:
		proof.license.ExpiresAt = &expiration
	default:
		return nil
	}
	codes, isList := license["entitlements"].([]any)
	if !isList {
		return nil
	}
	proof.entitlements = []string{}
	for _, code := range codes {
		text, isText := code.(string)
		if !isText {
			return nil
		}
		proof.entitlements = append(proof.entitlements, text)
	}
	if value, present := body["checkInBy"]; present {
		text, _ := value.(string)
		checkInBy, ok := isoTime(text)
		if !ok {
			return nil
		}
		proof.checkInBy = &checkInBy
	}
	if value, present := body["gracePeriod"]; present {
		seconds, isNumber := value.(float64)
		if !isNumber || seconds < 0 || seconds != math.Trunc(seconds) || time.Duration(seconds)*time.Second > MaxGuardGracePeriod {
			return nil
		}
		grace := time.Duration(seconds) * time.Second
		proof.gracePeriod = &grace
	}
	reason, _ := body["reason"].(string)
	if !validationReasons[reason] {
		reason = ""
	}
	if !isValid && reason == "" {
		return nil
	}
	proof.reason = reason
	return proof
}

// readFile is the LicenseFile option verified at at: a proof, or the code it fails with ("" and
// nil without one).
func (g *LicenseGuard) readFile(at time.Time) (*guardProof, string) {
	if g.o.LicenseFile == "" {
		return nil, ""
	}
	file, err := VerifyLicenseFile(g.o.LicenseFile, LicenseFileOptions{
		PublicKeys: g.o.PublicKeys, ProductID: g.o.ProductID, LicenseKey: g.o.LicenseKey,
		Fingerprint: g.o.Fingerprint, Now: at, ClockTolerance: g.o.ClockTolerance,
	})
	if err != nil {
		var refused *LicenseFileError
		if !errors.As(err, &refused) {
			return nil, "unexpected_error"
		}
		if refused.Code == "not_yet_valid" {
			// Issued after this clock: the clock was wound back past the file's making.
			return nil, "clock_tampered"
		}
		return nil, refused.Code
	}
	issued, _ := fileTimeOf(file.IssuedAt)
	proof := &guardProof{
		signedAt: issued, isValid: file.License.Status == "active",
		license:      GuardLicense{ID: file.LicenseID, Status: file.License.Status, ExpiresAt: file.License.ExpirationDate},
		entitlements: append([]string{}, file.Entitlements...),
	}
	switch file.License.Status {
	case "active":
	case "revoked":
		proof.reason = "revoked"
	default:
		proof.reason = "expired"
	}
	if file.CheckInBy != "" {
		if checkInBy, ok := isoTime(file.CheckInBy); ok {
			proof.checkInBy = &checkInBy
		}
	}
	if file.GracePeriod != nil {
		grace := time.Duration(*file.GracePeriod) * time.Second
		proof.gracePeriod = &grace
	}
	if file.ExpiresAt != nil {
		if expires, ok := fileTimeOf(*file.ExpiresAt); ok {
			proof.expiresAt = &expires
		}
	}
	return proof, ""
}

// The store.

func (g *LicenseGuard) keep(answer string, isValid bool) {
	record := guardRecord{Answer: answer}
	if g.o.Fingerprint != "" {
		record.Fingerprint = &g.o.Fingerprint
	}
	clear, err := json.Marshal(record)
	if err == nil {
		var sealed string
		if sealed, err = g.seal(clear); err == nil {
			err = g.o.Storage.Set(g.o.StorageKey, sealed)
		}
	}
	if err != nil && !isValid {
		_ = g.Forget() // an older "valid" must not outlive a signed "invalid" we could not store
	}
}

func (g *LicenseGuard) storeCipher(salt []byte) (cipher.AEAD, error) {
	key := hkdfSHA256([]byte(g.o.LicenseKey+"\n"+g.o.Fingerprint), salt, []byte(guardStoreKDFInfo))
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (g *LicenseGuard) seal(clear []byte) (string, error) {
	salt, iv := make([]byte, 16), make([]byte, 12)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	if _, err := rand.Read(iv); err != nil {
		return "", err
	}
	aead, err := g.storeCipher(salt)
	if err != nil {
		return "", err
	}
	sealed := aead.Seal(nil, iv, clear, []byte(guardStoreFormat))
	encode := base64.StdEncoding.EncodeToString
	return strings.Join([]string{guardStoreFormat, encode(salt), encode(iv), encode(sealed)}, "."), nil
}

// open returns the record's clear bytes, or false when it is not one sealed with this key.
func (g *LicenseGuard) open(text string) ([]byte, bool) {
	parts := strings.Split(strings.TrimSpace(text), ".")
	if len(parts) != 4 || parts[0] != guardStoreFormat {
		return nil, false
	}
	decoded := make([][]byte, 3)
	for i, part := range parts[1:] {
		value, err := base64.StdEncoding.DecodeString(part)
		if err != nil {
			return nil, false
		}
		decoded[i] = value
	}
	if len(decoded[0]) != 16 || len(decoded[1]) != 12 {
		return nil, false
	}
	aead, err := g.storeCipher(decoded[0])
	if err != nil {
		return nil, false
	}
	clear, err := aead.Open(nil, decoded[1], decoded[2], []byte(guardStoreFormat))
	return clear, err == nil
}
