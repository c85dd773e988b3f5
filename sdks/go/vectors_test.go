package keyturn_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"testing"
	"time"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

// answerOf is a vector's answer: valid, or the error's code.
func answerOf(err error) expectation {
	var token *keyturn.TokenError
	var signature *keyturn.SignatureError
	var webhook *keyturn.WebhookError
	var file *keyturn.LicenseFileError
	switch {
	case err == nil:
		return expectation{Valid: true}
	case errors.As(err, &token):
		return expectation{Error: token.Code}
	case errors.As(err, &signature):
		return expectation{Error: signature.Code}
	case errors.As(err, &webhook):
		return expectation{Error: webhook.Code}
	case errors.As(err, &file):
		return expectation{Error: file.Code}
	}
	return expectation{Error: "unexpected: " + err.Error()}
}

// expectAnswer fails the test unless err is the vector's expected answer (valid, or its error
// code), and tells whether it is valid, so the caller compares the value it answered.
func expectAnswer(t *testing.T, err error, expect expectation) bool {
	t.Helper()
	got := answerOf(err)
	if got.Valid != expect.Valid || got.Error != expect.Error {
		t.Fatalf("got %+v, want %+v", got, expect)
	}
	return got.Valid
}

// headerOf is a vector's headers as an http.Header.
func headerOf(headers map[string]string) http.Header {
	header := http.Header{}
	for name, value := range headers {
		header.Set(name, value)
	}
	return header
}

// sameJSON compares a value with the vector's JSON, both read back as generic JSON.
func sameJSON(t *testing.T, got any, want json.RawMessage) {
	t.Helper()
	encoded, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(encoded, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("got %s, want %s", encoded, want)
	}
}

func TestTokenVectors(t *testing.T) {
	v := loadVectors(t)
	for _, vector := range v.Tokens {
		vector := vector
		t.Run(vector.Name, func(t *testing.T) {
			keys := v.pems(vector.Options.PublicKeys)
			result, err := keyturn.ValidateLicenseToken(vector.Token, keyturn.TokenOptions{
				PublicKeys:          keys,
				ProductID:           vector.Options.ProductID,
				Fingerprint:         vector.Options.Fingerprint,
				Now:                 instant(t, vector.Options.Now),
				RequireEntitlements: vector.Options.RequireEntitlements,
			})
			if expectAnswer(t, err, vector.Expect) {
				sameJSON(t, result, vector.Expect.Result)
			}
		})
	}
}

func TestSignedAnswerVectors(t *testing.T) {
	v := loadVectors(t)
	for _, vector := range v.SignedAnswers {
		vector := vector
		t.Run(vector.Name, func(t *testing.T) {
			err := keyturn.VerifySignedAnswer(
				keyturn.SignedAnswer{
					Status: vector.Answer.Status, Header: headerOf(vector.Answer.Headers), Body: []byte(vector.Answer.Body),
					Method: vector.Answer.Method, Path: vector.Answer.Path,
				},
				keyturn.SignatureCheck{
					PublicKeys: v.pems(vector.Check.PublicKeys), Nonce: vector.Check.Nonce,
					Now: instant(t, vector.Check.Now), Tolerance: time.Duration(vector.Check.ToleranceSeconds) * time.Second,
				},
			)
			expectAnswer(t, err, vector.Expect)
		})
	}
}

func TestWebhookVectors(t *testing.T) {
	v := loadVectors(t)
	for _, vector := range v.Webhooks {
		vector := vector
		t.Run(vector.Name, func(t *testing.T) {
			event, err := keyturn.VerifyWebhook(keyturn.WebhookInput{
				Payload: []byte(vector.Payload), Header: headerOf(vector.Headers), Secret: vector.Secret, Now: instant(t, vector.Now),
			})
			if expectAnswer(t, err, vector.Expect) {
				sameJSON(t, event.Raw, vector.Expect.Event)
			}
		})
	}
}

func TestFingerprintVectors(t *testing.T) {
	for _, vector := range loadVectors(t).Fingerprints {
		if got := keyturn.MachineFingerprint(vector.Salt, vector.MachineID); got != vector.Fingerprint {
			t.Errorf("MachineFingerprint(%q, %q) = %s, want %s", vector.Salt, vector.MachineID, got, vector.Fingerprint)
		}
	}
}

func TestThisMachineHasAStableFingerprint(t *testing.T) {
	first, err := keyturn.ThisMachineFingerprint("my-app")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := keyturn.ThisMachineFingerprint("my-app")
	other, _ := keyturn.ThisMachineFingerprint("another-app")
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(first) || first != second || first == other {
		t.Fatalf("fingerprints %s, %s, %s", first, second, other)
	}
}

func TestAnInvalidClockToleranceIsRefusedNeverReadAsNoLimit(t *testing.T) {
	v := loadVectors(t)
	for _, tolerance := range []time.Duration{-time.Second, time.Hour + time.Second} {
		_, err := keyturn.ValidateLicenseToken(v.Tokens[0].Token, keyturn.TokenOptions{
			PublicKeyPEM: v.Keys["product"].PublicKeyPEM, ProductID: v.Tokens[0].Options.ProductID, ClockTolerance: tolerance,
		})
		var token *keyturn.TokenError
		if err == nil || errors.As(err, &token) {
			t.Fatalf("tolerance %s: %v", tolerance, err)
		}
	}
}

func TestLicenseFileVectors(t *testing.T) {
	v := loadVectors(t)
	for _, vector := range v.LicenseFiles {
		vector := vector
		t.Run(vector.Name, func(t *testing.T) {
			result, err := keyturn.VerifyLicenseFile(vector.File, keyturn.LicenseFileOptions{
				PublicKeys:          v.pems(vector.Options.PublicKeys),
				ProductID:           vector.Options.ProductID,
				LicenseKey:          vector.Options.LicenseKey,
				Fingerprint:         vector.Options.Fingerprint,
				Now:                 instant(t, vector.Options.Now),
				RequireEntitlements: vector.Options.RequireEntitlements,
			})
			if expectAnswer(t, err, vector.Expect) {
				sameJSON(t, result, vector.Expect.Result)
			}
		})
	}
}

func TestAnInvalidClockToleranceIsRefusedForLicenseFiles(t *testing.T) {
	v := loadVectors(t)
	for _, tolerance := range []time.Duration{-time.Second, time.Hour + time.Second} {
		_, err := keyturn.VerifyLicenseFile(v.LicenseFiles[0].File, keyturn.LicenseFileOptions{
			PublicKeys: v.pems([]string{"product"}),
			ProductID:  v.LicenseFiles[0].Options.ProductID,
			Now:        instant(t, v.LicenseFiles[0].Options.Now),

			ClockTolerance: tolerance,
		})
		var file *keyturn.LicenseFileError
		if err == nil || errors.As(err, &file) {
			t.Fatalf("ClockTolerance %s: want a refusal of the option, got %v", tolerance, err)
		}
	}
}
