package keyturn

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// GuardState is what the license guard decided.
type GuardState string

// The guard's states.
const (
	// GuardValid: the server said valid now ("online"), or it cannot be reached and the stored
	// proof is before its check-in deadline ("offline").
	GuardValid GuardState = "valid"
	// GuardGrace: the server cannot be reached, the check-in deadline has passed, and the grace
	// period has not ("check_in_overdue").
	GuardGrace GuardState = "grace"
	// GuardInvalid: anything else.
	GuardInvalid GuardState = "invalid"
)

const (
	// DefaultGuardClockTolerance is how far the clock may be behind the latest signed server time
	// before the guard counts it as wound back.
	DefaultGuardClockTolerance = 300 * time.Second
	// MaxGuardGracePeriod is the longest GracePeriod accepted: ten years.
	MaxGuardGracePeriod = 10 * 366 * 24 * time.Hour
	// guardStoreFormat names the stored proof's format: the last valid signed validation answer
	// and a license file for this machine, sealed with AES-256-GCM under a key derived
	// (HKDF-SHA256) from the license key and the fingerprint. The Python SDK writes the same.
	guardStoreFormat       = "keyturn-guard/1"
	guardStoreKDFInfo      = "keyturn-guard/1 aes-256-gcm"
	maxGuardClockTolerance = time.Hour
	validatePathSuffix     = "/licenses/validate"
)

// notAProof are the codes of a stored file that was tampered with or is not ours: the store
// counts as absent.
var notAProof = map[string]bool{
	"malformed": true, "invalid_signature": true, "unknown_key": true, "decryption_failed": true,
	"product_mismatch": true, "unsupported_algorithm": true,
}

// GuardLicense is the license as the last verified signed proof states it.
type GuardLicense struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// ExpiresAt is when the license expires (ISO 8601); nil: never.
	ExpiresAt *string `json:"expiresAt"`
}

// GuardResult is what Check answers: the same fields and reasons as the JavaScript client's guard.
//
// Reason is "online" or "offline" when valid; "check_in_overdue" in grace; when invalid, the
// server's validation reason ("expired", "revoked", "suspended", "not_activated" …),
// "grace_expired", "no_proof", "clock_tampered", a license-file code of the stored proof
// ("expired", "fingerprint_mismatch" …), or the API's error code when the server refused the check
// ("license_not_found", "unauthenticated", "rate_limited" …).
type GuardResult struct {
	State  GuardState `json:"state"`
	Reason string     `json:"reason"`
	// License is nil when there is no proof.
	License      *GuardLicense `json:"license"`
	Entitlements []string      `json:"entitlements"`
	// ValidUntil is until when this state holds without a check-in: the check-in deadline when
	// valid, the deadline plus the grace period in grace; nil when invalid or when the license
	// needs no check-in.
	ValidUntil *time.Time `json:"validUntil"`
}

// GuardStateChange is given to OnChange when a check's state or reason differs from the previous.
type GuardStateChange struct {
	// Previous is nil at the first check.
	Previous *GuardResult
	Current  GuardResult
}

// GuardOptions configure a LicenseGuard.
type GuardOptions struct {
	// Client makes the online check; it must verify signed answers (Options.PublicKeys).
	Client *Client
	// LicenseKey and ProductID name the license.
	LicenseKey string
	ProductID  string
	// PublicKeys are the product's public keys (PEM or JWK JSON) the stored proof is checked with.
	PublicKeys []string
	// Fingerprint is this machine (MachineFingerprint); the license must be activated on it.
	Fingerprint string
	// Storage keeps the proof (default: FileStorage in DefaultGuardDirectory()).
	Storage GuardStorage
	// GracePeriod is the grace after the check-in deadline when the license's policy sets none.
	GracePeriod time.Duration
	// ClockTolerance is how far the clock may be behind the latest signed server time (zero:
	// DefaultGuardClockTolerance; at most an hour).
	ClockTolerance time.Duration
	// Entitlements the license must carry.
	Entitlements []string
	// Now is the clock to judge at (default time.Now).
	Now func() time.Time
	// OnChange, when set, is called when a check's state or reason differs from the previous one.
	OnChange func(GuardStateChange)
}

// LicenseGuard decides whether this copy of the application is licensed, and keeps working
// offline.
//
// Check validates the license online with a signed answer. When it is valid, the guard keeps that
// signed answer and a license file for this machine (encrypted with the license key and the
// fingerprint) in Storage. When the server cannot be reached (a network error, a timeout, a 5xx or
// ctx done; nothing else), it decides from that stored proof: valid ("offline") until the
// answer's checkInBy, then grace ("check_in_overdue") until checkInBy plus the grace period (the
// policy's, when the answer carries one, else GracePeriod), then invalid ("grace_expired"). A store
// that is missing, unreadable or does not verify counts as absent ("no_proof"); a clock earlier
// than the latest signed server time the guard has seen, by more than ClockTolerance, is
// "clock_tampered". It never fails open: what the guard does not understand is invalid. Safe for
// concurrent use.
type LicenseGuard struct {
	o              GuardOptions
	storageKey     string
	mu             sync.Mutex
	latestSignedAt int64
	last           *GuardResult
}

// NewLicenseGuard checks the options; invalid ones are an error, before anything is checked.
func NewLicenseGuard(options GuardOptions) (*LicenseGuard, error) {
	o := options
	switch {
	case o.Client == nil:
		return nil, errors.New("keyturn: GuardOptions.Client is required")
	case len(o.Client.o.PublicKeys) == 0:
		return nil, errors.New("keyturn: the guard's Client must verify signed answers: give it PublicKeys")
	case len(o.LicenseKey) == 0 || len(o.LicenseKey) > 256 || strings.TrimSpace(o.LicenseKey) == "":
		return nil, errors.New("keyturn: GuardOptions.LicenseKey must be a license key (1 to 256 characters)")
	case len(o.ProductID) == 0 || len(o.ProductID) > 64:
		return nil, errors.New("keyturn: GuardOptions.ProductID must be a product id")
	case len(o.PublicKeys) == 0:
		return nil, errors.New("keyturn: GuardOptions.PublicKeys needs the product's public key")
	case len(o.Fingerprint) > 256:
		return nil, errors.New("keyturn: GuardOptions.Fingerprint is at most 256 characters")
	case o.GracePeriod < 0 || o.GracePeriod > MaxGuardGracePeriod:
		return nil, fmt.Errorf("keyturn: GuardOptions.GracePeriod must be from 0 to %s", MaxGuardGracePeriod)
	case o.ClockTolerance < 0 || o.ClockTolerance > maxGuardClockTolerance:
		return nil, errors.New("keyturn: GuardOptions.ClockTolerance must be from 0 to an hour")
	}
	if _, err := keyList(o.PublicKeys); err != nil {
		return nil, err
	}
	for _, code := range o.Entitlements {
		if len(code) == 0 || len(code) > 256 {
			return nil, errors.New("keyturn: GuardOptions.Entitlements are entitlement codes (1 to 256 characters)")
		}
	}
	if o.ClockTolerance == 0 {
		o.ClockTolerance = DefaultGuardClockTolerance
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Storage == nil {
		dir, err := DefaultGuardDirectory()
		if err != nil {
			return nil, fmt.Errorf("keyturn: no per-user folder for the guard's store (give GuardOptions.Storage): %w", err)
		}
		o.Storage = FileStorage{Dir: dir}
	}
	digest := sha256.Sum256([]byte(o.ProductID + "\n" + o.LicenseKey + "\n" + o.Fingerprint))
	return &LicenseGuard{o: o, storageKey: "keyturn-guard-" + hex.EncodeToString(digest[:])[:40]}, nil
}

// StorageKey is the key of this license's proof on this machine in Storage (no secret in it).
func (g *LicenseGuard) StorageKey() string { return g.storageKey }

// Forget deletes the stored proof (e.g. when the user removes the license from this machine).
func (g *LicenseGuard) Forget() error { return g.o.Storage.Delete(g.storageKey) }

// Check decides now: online when the server answers, else from the stored proof. The error is
// only for a Now that returned the zero time; the result is then invalid as well.
func (g *LicenseGuard) Check(ctx context.Context) (GuardResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.o.Now()
	if now.IsZero() {
		return GuardResult{State: GuardInvalid, Entitlements: []string{}}, errors.New("keyturn: the guard's Now returned the zero time")
	}
	result := g.decide(ctx, now)
	previous := g.last
	g.last = &result
	if g.o.OnChange != nil && (previous == nil || previous.State != result.State || previous.Reason != result.Reason) {
		g.o.OnChange(GuardStateChange{Previous: previous, Current: result})
	}
	return result, nil
}

func invalidResult(reason string, answer map[string]any) GuardResult {
	license, entitlements := licenseOf(answer)
	return GuardResult{State: GuardInvalid, Reason: reason, License: license, Entitlements: entitlements}
}

func licenseOf(answer map[string]any) (*GuardLicense, []string) {
	license, _ := answer["license"].(map[string]any)
	id, _ := license["id"].(string)
	if id == "" {
		return nil, []string{}
	}
	status, _ := license["status"].(string)
	result := &GuardLicense{ID: id, Status: status}
	if expires, isText := license["expirationDate"].(string); isText {
		result.ExpiresAt = &expires
	}
	entitlements := []string{}
	codes, _ := license["entitlements"].([]any)
	for _, code := range codes {
		if text, isText := code.(string); isText {
			entitlements = append(entitlements, text)
		}
	}
	return result, entitlements
}

// isoTime reads an optional ISO 8601 time: nil when absent, false when it is not a time.
func isoTime(value any) (*time.Time, bool) {
	if value == nil {
		return nil, true
	}
	text, isText := value.(string)
	if !isText || len(text) > 40 {
		return nil, false
	}
	at, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return nil, false
	}
	return &at, true
}

func (g *LicenseGuard) answerIsOurs(answer map[string]any) bool {
	_, hasValidity := answer["isValid"].(bool)
	license, _ := answer["license"].(map[string]any)
	id, _ := license["id"].(string)
	product, _ := license["productId"].(string)
	return hasValidity && id != "" && len(id) <= 64 && product == g.o.ProductID
}

func signatureReason(code string) string {
	if code == "unknown_key" {
		return "unknown_key"
	}
	return "invalid_signature"
}

// Online.

func (g *LicenseGuard) decide(ctx context.Context, now time.Time) GuardResult {
	request := LicenseKeyRequest{Key: g.o.LicenseKey, ProductID: g.o.ProductID, Fingerprint: g.o.Fingerprint}
	kept, err := g.o.Client.validateKept(ctx, request, g.o.Entitlements)
	if err != nil {
		var connection *ConnectionError
		var refused *APIError
		var signature *SignatureError
		switch {
		case errors.As(err, &connection) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
			return g.offline(now)
		case errors.As(err, &refused):
			if refused.Status >= 500 {
				return g.offline(now)
			}
			if refused.Code == "license_not_found" {
				_ = g.Forget()
			}
			return invalidResult(refused.Code, nil)
		case errors.As(err, &signature):
			// A stale answer means this clock and the server's disagree by minutes.
			if signature.Code == "stale" {
				return invalidResult("clock_tampered", nil)
			}
			return invalidResult(signatureReason(signature.Code), nil)
		default:
			return invalidResult("malformed", nil)
		}
	}
	signedAt, err := verifyKeptAnswer(kept.answer, g.o.PublicKeys, kept.nonce)
	if err != nil {
		var signature *SignatureError
		if errors.As(err, &signature) {
			return invalidResult(signatureReason(signature.Code), nil)
		}
		return invalidResult("invalid_signature", nil)
	}
	if signedAt > g.latestSignedAt {
		g.latestSignedAt = signedAt
	}
	var answer map[string]any
	if json.Unmarshal(kept.answer.Body, &answer) != nil || !g.answerIsOurs(answer) {
		return invalidResult("malformed", nil)
	}
	if answer["isValid"] != true {
		// The server said no: a stored proof must not bring the license back offline.
		_ = g.Forget()
		reason, _ := answer["reason"].(string)
		if reason == "" || len(reason) > 64 {
			reason = "invalid"
		}
		return invalidResult(reason, answer)
	}
	checkInBy, ok := isoTime(answer["checkInBy"])
	if !ok {
		return invalidResult("malformed", answer)
	}
	g.keep(ctx, now, kept, answer)
	license, entitlements := licenseOf(answer)
	return GuardResult{State: GuardValid, Reason: "online", License: license, Entitlements: entitlements, ValidUntil: checkInBy}
}

type guardRecord struct {
	Answer struct {
		Status  int               `json:"status"`
		Method  string            `json:"method"`
		Path    string            `json:"path"`
		Headers map[string]string `json:"headers"`
		Body    []byte            `json:"body"`
		Nonce   string            `json:"nonce"`
	} `json:"answer"`
	LicenseFile string `json:"licenseFile"`
}

// keep stores the new answer with a license file for this machine: the stored one while it is for
// this license and in the first half of its life, else a fresh one. When no file can be had, the
// store stays as it was.
func (g *LicenseGuard) keep(ctx context.Context, now time.Time, kept *keptAnswer, answer map[string]any) {
	licenseID := answer["license"].(map[string]any)["id"].(string)
	file := ""
	if stored := g.load(); stored != nil {
		if checked, err := g.verifyFile(stored.licenseFile, now); err == nil && checked.LicenseID == licenseID && !pastHalfLife(checked, now) {
			file = stored.licenseFile
		}
	}
	if file == "" {
		request := LicenseKeyRequest{Key: g.o.LicenseKey, ProductID: g.o.ProductID, Fingerprint: g.o.Fingerprint}
		made, err := g.o.Client.CreateLicenseFile(ctx, request, true)
		if err != nil {
			return
		}
		if _, err := g.verifyFile(made.LicenseFile, now); err != nil {
			return
		}
		file = made.LicenseFile
	}
	var record guardRecord
	record.Answer.Status, record.Answer.Method, record.Answer.Path = kept.answer.Status, kept.answer.Method, kept.answer.Path
	record.Answer.Headers = map[string]string{}
	for _, name := range []string{"signature", "signature-input", "content-digest", "date"} {
		if value, found := headerValue(kept.answer.Header, name); found {
			record.Answer.Headers[name] = value
		}
	}
	record.Answer.Body, record.Answer.Nonce, record.LicenseFile = kept.answer.Body, kept.nonce, file
	clear, err := json.Marshal(record)
	if err != nil {
		return
	}
	sealed, err := g.seal(clear)
	if err != nil {
		return
	}
	_ = g.o.Storage.Set(g.storageKey, sealed)
}

func pastHalfLife(checked *LicenseFileResult, now time.Time) bool {
	if checked.ExpiresAt == nil {
		return false
	}
	issued, okIssued := fileTimeOf(checked.IssuedAt)
	expires, okExpires := fileTimeOf(*checked.ExpiresAt)
	if !okIssued || !okExpires {
		return true
	}
	return !now.Before(issued.Add(expires.Sub(issued) / 2))
}

// Offline.

func (g *LicenseGuard) offline(now time.Time) GuardResult {
	proof := g.load()
	if proof == nil {
		return invalidResult("no_proof", nil)
	}
	latest := g.latestSignedAt
	if proof.signedAt > latest {
		latest = proof.signedAt
	}
	if time.Unix(latest, 0).After(now.Add(g.o.ClockTolerance)) {
		return invalidResult("clock_tampered", proof.answer)
	}
	checked, err := g.verifyFile(proof.licenseFile, now)
	if err != nil {
		var refused *LicenseFileError
		if !errors.As(err, &refused) || notAProof[refused.Code] {
			return invalidResult("no_proof", nil)
		}
		return invalidResult(refused.Code, proof.answer)
	}
	license, entitlements := licenseOf(proof.answer)
	if checked.LicenseID != license.ID {
		return invalidResult("no_proof", nil)
	}
	checkInBy, ok := isoTime(proof.answer["checkInBy"])
	if !ok {
		return invalidResult("no_proof", nil)
	}
	if checkInBy == nil || now.Before(*checkInBy) {
		return GuardResult{State: GuardValid, Reason: "offline", License: license, Entitlements: entitlements, ValidUntil: checkInBy}
	}
	grace := g.o.GracePeriod
	if seconds, isNumber := proof.answer["gracePeriod"].(float64); isNumber && seconds >= 0 && seconds == math.Trunc(seconds) {
		grace = time.Duration(seconds) * time.Second
	}
	if ends := checkInBy.Add(grace); now.Before(ends) {
		return GuardResult{State: GuardGrace, Reason: "check_in_overdue", License: license, Entitlements: entitlements, ValidUntil: &ends}
	}
	return invalidResult("grace_expired", proof.answer)
}

func (g *LicenseGuard) verifyFile(file string, now time.Time) (*LicenseFileResult, error) {
	return VerifyLicenseFile(file, LicenseFileOptions{
		PublicKeys:          g.o.PublicKeys,
		ProductID:           g.o.ProductID,
		LicenseKey:          g.o.LicenseKey,
		Fingerprint:         g.o.Fingerprint,
		Now:                 now,
		ClockTolerance:      g.o.ClockTolerance,
		RequireEntitlements: g.o.Entitlements,
	})
}

type guardProof struct {
	answer      map[string]any
	signedAt    int64
	licenseFile string
}

// load returns the stored proof when it is whole and its answer verifies; nil otherwise.
func (g *LicenseGuard) load() *guardProof {
	text, found, err := g.o.Storage.Get(g.storageKey)
	if err != nil || !found {
		return nil
	}
	clear, ok := g.open(text)
	if !ok {
		return nil
	}
	var record guardRecord
	if !strictDecode(clear, &record) {
		return nil
	}
	kept := record.Answer
	if kept.Status != http.StatusOK || kept.Method != "POST" || !strings.HasSuffix(kept.Path, validatePathSuffix) ||
		len(kept.Path) > 512 || kept.Nonce == "" || len(kept.Nonce) > 128 || record.LicenseFile == "" {
		return nil
	}
	header := http.Header{}
	for name, value := range kept.Headers {
		header.Set(name, value)
	}
	answer := SignedAnswer{Status: kept.Status, Header: header, Body: kept.Body, Method: kept.Method, Path: kept.Path}
	signedAt, err := verifyKeptAnswer(answer, g.o.PublicKeys, kept.Nonce)
	if err != nil {
		return nil
	}
	var body map[string]any
	if json.Unmarshal(kept.Body, &body) != nil || !g.answerIsOurs(body) || body["isValid"] != true {
		return nil
	}
	return &guardProof{answer: body, signedAt: signedAt, licenseFile: record.LicenseFile}
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
