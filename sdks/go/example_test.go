package keyturn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

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

// The README shows the quick start above, line for line.
func TestTheReadmeQuickStartIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("no go block in README.md")
	}
	for _, line := range strings.Split(strings.TrimSpace(string(block[1])), "\n") {
		if !strings.Contains(string(example), "\t\t"+line) {
			t.Errorf("README.md line not in the example: %s", line)
		}
	}
}
