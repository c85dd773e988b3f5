package keyturn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

// The README's quick start, compiled (not run: it needs a server).
func Example() {
	run := func(ctx context.Context, clientAPIKey, productPublicKey, productID, licenseKey string) error {
		client := keyturn.NewClient(keyturn.Options{BaseURL: "https://licensing.example.com", APIKey: clientAPIKey, PublicKeys: []string{productPublicKey}})
		machine, _ := keyturn.ThisMachineFingerprint(productID) // HMAC-SHA256(salt, this machine's id)
		seat := keyturn.LicenseKeyRequest{Key: licenseKey, ProductID: productID, Fingerprint: machine}
		if _, err := client.ActivateLicense(ctx, seat, ""); err != nil { // *APIError "activation_limit_reached" when full
			return err
		}
		issued, _ := client.CreateLicenseToken(ctx, seat, 0)
		// Later, with no network:
		_, err := keyturn.ValidateLicenseToken(issued.Token, keyturn.TokenOptions{PublicKeyPEM: productPublicKey, ProductID: productID, Fingerprint: machine})
		var refused *keyturn.TokenError
		if errors.As(err, &refused) {
			fmt.Println("not licensed:", refused.Code) // expired, fingerprint_mismatch, invalid_signature …
		}
		return nil
	}
	_ = run
}

// The README's guard quick start, compiled (not run: it needs a server).
func ExampleNewLicenseGuard() {
	run := func(ctx context.Context, client *keyturn.Client, licenseKey, productID, productPublicKey, machine string) error {
		guard, err := keyturn.NewLicenseGuard(keyturn.GuardOptions{
			Client:      client,
			LicenseKey:  licenseKey,
			ProductID:   productID,
			PublicKeys:  []string{productPublicKey}, // every answer it trusts is signed by this key
			Fingerprint: machine,                    // activated on this machine
			GracePeriod: 72 * time.Hour,             // when the license's policy sets none
		})
		if err != nil {
			return err
		}
		result, _ := guard.Check(ctx) // online; offline from the last signed answer after a network error, 5xx, 408 or 429
		switch result.State {
		case keyturn.GuardInvalid:
			return fmt.Errorf("not licensed: %s", result.Reason) // revoked, grace_expired, clock_tampered, no_proof …
		case keyturn.GuardGrace:
			fmt.Println("Connect to the internet before", result.ValidUntil)
		}
		return nil
	}
	_ = run
}

// The README's air-gapped round trip, compiled (not run: the license file comes from the vendor).
func ExampleCreateActivationRequest() {
	run := func(licenseKey, productID, productPublicKey, machine string) error {
		// On the machine, once: a request file for the user to carry to the vendor (it holds no license key).
		request, err := keyturn.CreateActivationRequest(keyturn.ActivationRequestOptions{
			LicenseKey:  licenseKey,
			ProductID:   productID,
			Fingerprint: machine, // ThisMachineFingerprint(salt)
			Name:        "Lab PC 4",
			Platform:    "linux-amd64",
		})
		if err != nil {
			return err // *InvalidOptionError: an empty fingerprint, a name over 200 characters …
		}
		if err := os.WriteFile("lab-pc-4.request", []byte(request), 0o644); err != nil {
			return err
		}
		// The vendor answers with a license file: keyturn offline activate lab-pc-4.request --out lab-pc-4.license
		// When it comes back, and at every start: check it, for this license key and this machine.
		text, err := os.ReadFile("lab-pc-4.license")
		if err != nil {
			return err
		}
		file, err := keyturn.VerifyLicenseFile(string(text), keyturn.LicenseFileOptions{
			PublicKeyPEM: productPublicKey, ProductID: productID, LicenseKey: licenseKey, Fingerprint: machine,
		})
		if err != nil {
			return err // *LicenseFileError: decryption_failed on another machine, expired …
		}
		// Giving the seat back: delete the file, then show the code (the vendor: keyturn offline deactivate act_… CODE).
		if err := os.Remove("lab-pc-4.license"); err != nil {
			return err
		}
		code, err := keyturn.CreateDeactivationCode(keyturn.DeactivationCodeOptions{ActivationID: file.ActivationID, Secret: file.DeactivationSecret})
		if err != nil {
			return err
		}
		fmt.Println("Read this code to your vendor:", code) // e.g. Q2M4-7XKD-3H9P-T6WB
		return nil
	}
	_ = run
}

// The README shows the quick starts above, line for line.
func TestTheReadmeQuickStartIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) < 2 {
		t.Fatal("the README's go blocks are missing")
	}
	for _, block := range blocks {
		for _, line := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
			if !strings.Contains(string(example), "\t\t"+line) {
				t.Errorf("README.md line not in the example: %s", line)
			}
		}
	}
}
