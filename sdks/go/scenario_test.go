package keyturn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

const unknownKey = "ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ"

func apiError(t *testing.T, err error, status int, code string) *keyturn.APIError {
	t.Helper()
	var refused *keyturn.APIError
	if !errors.As(err, &refused) {
		t.Fatalf("want an *APIError %d %s, got %v", status, code, err)
	}
	if refused.Status != status || refused.Code != code {
		t.Fatalf("want %d %s, got %d %s (%s)", status, code, refused.Status, refused.Code, refused.Detail)
	}
	return refused
}

// TestLiveScenario runs conformance/scenario.md against a real keyturn serve.
func TestLiveScenario(t *testing.T) {
	s := startScenario(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := keyturn.NewClient(keyturn.Options{
		BaseURL: s.BaseURL, APIKey: s.ClientKey, PublicKeys: []string{s.PublicKeyPEM}, Timeout: 10 * time.Second,
	})
	machine := keyturn.MachineFingerprint("keyturn-go-scenario", "scenario-machine")
	main, full := s.Licenses["main"], s.Licenses["full"]
	byKey := keyturn.LicenseKeyRequest{Key: main.Key, ProductID: s.ProductID}
	onMachine := keyturn.LicenseKeyRequest{Key: main.Key, ProductID: s.ProductID, Fingerprint: machine}

	// Activate, validate (signed), heartbeat, usage.
	if result, err := client.ValidateLicense(ctx, byKey); err != nil || !result.IsValid {
		t.Fatalf("validate: %+v %v", result, err)
	}
	activation, err := client.ActivateLicense(ctx, onMachine, "scenario")
	if err != nil || activation["fingerprint"] != machine {
		t.Fatalf("activate: %v %v", activation, err)
	}
	if result, err := client.ValidateLicense(ctx, onMachine); err != nil || !result.IsValid || result.Reason != nil {
		t.Fatalf("validate on the machine: %+v %v", result, err)
	}
	if seat, err := client.HeartbeatLicense(ctx, onMachine); err != nil || seat["fingerprint"] != machine {
		t.Fatalf("heartbeat: %v %v", seat, err)
	}
	if license, err := client.IncrementUsage(ctx, main.Key, s.ProductID, 2); err != nil || license["uses"] != float64(2) {
		t.Fatalf("usage: %v %v", license, err)
	}

	// A token, checked offline on this machine and refused on another.
	issued, err := client.CreateLicenseToken(ctx, onMachine, 0)
	if err != nil {
		t.Fatal(err)
	}
	result, err := keyturn.ValidateLicenseToken(issued.Token, keyturn.TokenOptions{
		PublicKeyPEM: s.PublicKeyPEM, ProductID: s.ProductID, Fingerprint: machine,
	})
	if err != nil || result.LicenseID != main.ID || result.Fingerprint != machine {
		t.Fatalf("offline check: %+v %v", result, err)
	}
	_, err = keyturn.ValidateLicenseToken(issued.Token, keyturn.TokenOptions{
		PublicKeyPEM: string(s.PublicKeyJWK), ProductID: s.ProductID, Fingerprint: "another-machine",
	})
	var refusedToken *keyturn.TokenError
	if !errors.As(err, &refusedToken) || refusedToken.Code != "fingerprint_mismatch" {
		t.Fatalf("offline check on another machine: %v", err)
	}

	// A license file for this machine, encrypted: read offline here, useless on another machine.
	made, err := client.CreateLicenseFile(ctx, onMachine, true)
	if err != nil {
		t.Fatal(err)
	}
	checked, err := keyturn.VerifyLicenseFile(made.LicenseFile, keyturn.LicenseFileOptions{
		PublicKeyPEM: s.PublicKeyPEM, ProductID: s.ProductID, LicenseKey: main.Key, Fingerprint: machine,
	})
	if err != nil || checked.LicenseID != main.ID || checked.Fingerprint != machine || !checked.Encrypted {
		t.Fatalf("license file: %+v %v", checked, err)
	}
	_, err = keyturn.VerifyLicenseFile(made.LicenseFile, keyturn.LicenseFileOptions{
		PublicKeyPEM: s.PublicKeyPEM, ProductID: s.ProductID, LicenseKey: main.Key, Fingerprint: "another-machine",
	})
	var unreadable *keyturn.LicenseFileError
	if !errors.As(err, &unreadable) || unreadable.Code != "decryption_failed" {
		t.Fatalf("license file on another machine: %v", err)
	}

	// Deactivate: the machine is no longer activated.
	if err := client.DeactivateLicense(ctx, onMachine); err != nil {
		t.Fatal(err)
	}
	if result, err := client.ValidateLicense(ctx, onMachine); err != nil || result.IsValid || result.Reason == nil || *result.Reason != "not_activated" {
		t.Fatalf("validate after deactivation: %+v %v", result, err)
	}

	offlineRoundTrip(ctx, t, s)

	// 409: every seat of the full license is taken.
	_, err = client.ActivateLicense(ctx, keyturn.LicenseKeyRequest{Key: full.Key, ProductID: s.ProductID, Fingerprint: machine}, "")
	apiError(t, err, 409, "activation_limit_reached")

	// A signed answer checked against a key that is not the product's.
	stranger := keyturn.NewClient(keyturn.Options{
		BaseURL: s.BaseURL, APIKey: s.ClientKey, PublicKeys: loadVectors(t).pems([]string{"other"}),
	})
	_, err = stranger.ValidateLicense(ctx, byKey)
	var spoofed *keyturn.SignatureError
	if !errors.As(err, &spoofed) || spoofed.Code != "unknown_key" {
		t.Fatalf("a stranger's key: %v", err)
	}

	// 401: an unknown API key.
	wrongKey := keyturn.NewClient(keyturn.Options{BaseURL: s.BaseURL, APIKey: "kt_client_not-a-real-key-000000000000"})
	_, err = wrongKey.ValidateLicense(ctx, byKey)
	apiError(t, err, 401, "unauthenticated")

	// 404, then 429 with Retry-After once the address has guessed too many unknown keys (last: the
	// address stays blocked). The wait asked for is longer than the client ever waits: not retried.
	unknown := keyturn.LicenseKeyRequest{Key: unknownKey, ProductID: s.ProductID}
	_, err = client.ValidateLicense(ctx, unknown)
	apiError(t, err, 404, "license_not_found")
	for i := 0; i < s.GuessLimit; i++ {
		if _, err = client.ValidateLicense(ctx, unknown); err != nil {
			var refused *keyturn.APIError
			if errors.As(err, &refused) && refused.Status == 429 {
				break
			}
		}
	}
	limited := apiError(t, err, 429, "rate_limited")
	if !limited.HasRetryAfter || limited.RetryAfter <= 20*time.Second {
		t.Fatalf("Retry-After: %v %v", limited.HasRetryAfter, limited.RetryAfter)
	}
}

// offlineRoundTrip is the scenario's air-gapped machine: its request file (the key typed in lower
// case without dashes, a name outside ASCII with characters JSON escapes differently) turned into
// a license file by the vendor (an admin key), read on the machine, and its seat given back with a
// deactivation code, a wrong code refused first.
func offlineRoundTrip(ctx context.Context, t *testing.T, s *scenario) {
	t.Helper()
	main := s.Licenses["main"]
	machine := keyturn.MachineFingerprint("keyturn-go-scenario", "air-gapped-machine")
	name := "Poste de Zoé ✓ <lab & co> \u2028"
	request, err := keyturn.CreateActivationRequest(keyturn.ActivationRequestOptions{
		LicenseKey:  strings.ToLower(strings.ReplaceAll(main.Key, "-", "")),
		ProductID:   s.ProductID,
		Fingerprint: machine,
		Name:        name,
		Platform:    "linux-amd64",
	})
	if err != nil {
		t.Fatal(err)
	}
	vendor := keyturn.NewClient(keyturn.Options{BaseURL: s.BaseURL, APIKey: s.AdminKey, Timeout: 10 * time.Second})
	var answer struct {
		Activation struct {
			ID          string `json:"id"`
			Fingerprint string `json:"fingerprint"`
			Name        string `json:"name"`
		} `json:"activation"`
		LicenseFile string `json:"licenseFile"`
	}
	if err := vendor.Request(ctx, "POST", "/licenses/activate-offline", map[string]string{"request": request}, &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Activation.Fingerprint != machine || answer.Activation.Name != name {
		t.Fatalf("offline activation: %+v", answer.Activation)
	}
	file, err := keyturn.VerifyLicenseFile(answer.LicenseFile, keyturn.LicenseFileOptions{
		PublicKeyPEM: s.PublicKeyPEM, ProductID: s.ProductID, LicenseKey: main.Key, Fingerprint: machine,
	})
	if err != nil || file.ActivationID != answer.Activation.ID || !file.Encrypted || len(file.DeactivationSecret) != 43 {
		t.Fatalf("the machine's license file: %+v %v", file, err)
	}
	path := "/activations/" + file.ActivationID + "/deactivate-offline"
	wrong, err := keyturn.CreateDeactivationCode(keyturn.DeactivationCodeOptions{ActivationID: file.ActivationID, Secret: strings.Repeat("A", 43)})
	if err != nil {
		t.Fatal(err)
	}
	apiError(t, vendor.Request(ctx, "POST", path, map[string]string{"code": wrong}, nil), 422, "deactivation_code_invalid")
	code, err := keyturn.CreateDeactivationCode(keyturn.DeactivationCodeOptions{ActivationID: file.ActivationID, Secret: file.DeactivationSecret})
	if err != nil {
		t.Fatal(err)
	}
	if err := vendor.Request(ctx, "POST", path, map[string]string{"code": code}, nil); err != nil {
		t.Fatalf("the right code: %v", err)
	}
	// The seat is free: the activation is gone.
	apiError(t, vendor.Request(ctx, "GET", "/activations/"+file.ActivationID, nil, nil), 404, "activation_not_found")
}
