package keyturn_test

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

// The offline token check vs a bare Ed25519 verify of the same signature over the same bytes:
//
//	go test -run '^$' -bench . -benchtime 2s
func benchmarkVector(b *testing.B, name string) (string, keyturn.TokenOptions) {
	v := loadVectors(b)
	for _, vector := range v.Tokens {
		if vector.Name == name {
			return vector.Token, keyturn.TokenOptions{
				PublicKeyPEM: v.Keys["product"].PublicKeyPEM, ProductID: vector.Options.ProductID,
				Now: instant(b, vector.Options.Now),
			}
		}
	}
	b.Fatal("no such vector")
	return "", keyturn.TokenOptions{}
}

// A token with custom fields (nested JSON) and entitlements, and a plain one.
func BenchmarkValidateLicenseToken(b *testing.B) {
	benchmarkValidate(b, "valid-custom-fields-entitlements")
}

func BenchmarkValidatePlainLicenseToken(b *testing.B) {
	benchmarkValidate(b, "valid")
}

func benchmarkValidate(b *testing.B, name string) {
	token, options := benchmarkVector(b, name)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := keyturn.ValidateLicenseToken(token, options); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareEd25519Verify(b *testing.B) {
	token, options := benchmarkVector(b, "valid-custom-fields-entitlements")
	block, _ := pem.Decode([]byte(options.PublicKeyPEM))
	parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		b.Fatal(err)
	}
	key := parsed.(ed25519.PublicKey)
	last := strings.LastIndexByte(token, '.')
	signature, _ := base64.RawURLEncoding.DecodeString(token[last+1:])
	input := []byte(token[:last])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if !ed25519.Verify(key, input, signature) {
			b.Fatal("does not verify")
		}
	}
}

// The two interleaved in short rounds, best of each (the machine is shared: a slow round says
// little), reported as the check's rate in percent of the bare verify's:
//
//	go test -run '^$' -bench CheckVsVerify
func BenchmarkCheckVsVerify(b *testing.B) {
	for _, name := range []string{"valid-custom-fields-entitlements", "valid"} {
		b.Run(name, func(b *testing.B) {
			token, options := benchmarkVector(b, name)
			block, _ := pem.Decode([]byte(options.PublicKeyPEM))
			parsed, _ := x509.ParsePKIXPublicKey(block.Bytes)
			key := parsed.(ed25519.PublicKey)
			last := strings.LastIndexByte(token, '.')
			signature, _ := base64.RawURLEncoding.DecodeString(token[last+1:])
			input := []byte(token[:last])
			interleaved(b,
				func() { _, _ = keyturn.ValidateLicenseToken(token, options) },
				func() { ed25519.Verify(key, input, signature) })
		})
	}
}

// A clear license file's check vs a bare Ed25519 verify of its signed bytes, interleaved as above:
//
//	go test -run '^$' -bench FileVsVerify
func BenchmarkFileVsVerify(b *testing.B) {
	v := loadVectors(b)
	vector := v.LicenseFiles[0] // valid-clear
	options := keyturn.LicenseFileOptions{
		PublicKeyPEM: v.Keys["product"].PublicKeyPEM, ProductID: vector.Options.ProductID,
		Now: instant(b, vector.Options.Now),
	}
	block, _ := pem.Decode([]byte(options.PublicKeyPEM))
	parsed, _ := x509.ParsePKIXPublicKey(block.Bytes)
	key := parsed.(ed25519.PublicKey)
	lines := strings.Split(strings.TrimSpace(vector.File), "\n")
	body := strings.Join(lines[1:len(lines)-1], "")
	last := strings.LastIndexByte(body, '.')
	signature, _ := base64.RawURLEncoding.DecodeString(body[last+1:])
	input := []byte(body[:last])
	interleaved(b,
		func() { _, _ = keyturn.VerifyLicenseFile(vector.File, options) },
		func() { ed25519.Verify(key, input, signature) })
}

// interleaved runs check and verify in alternating rounds of 200, keeps each one's best round (the
// machine is shared: a slow round says little) and reports check's rate in percent of verify's.
func interleaved(b *testing.B, check, verify func()) {
	const batch = 200
	best := func(current time.Duration, run func()) time.Duration {
		start := time.Now()
		for i := 0; i < batch; i++ {
			run()
		}
		if elapsed := time.Since(start); current == 0 || elapsed < current {
			return elapsed
		}
		return current
	}
	var checked, verified time.Duration
	for round := 0; round < 30 || round*batch < b.N; round++ {
		checked = best(checked, check)
		verified = best(verified, verify)
	}
	b.ReportMetric(float64(checked.Nanoseconds())/batch, "check-ns")
	b.ReportMetric(float64(verified.Nanoseconds())/batch, "verify-ns")
	b.ReportMetric(100*float64(verified)/float64(checked), "ratio-%")
}

// failingTransport fails every request at once: an unreachable server without the network's wait.
type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("unreachable (benchmark)")
}

// The guard's Check while the server is unreachable: the stored record opened (HKDF, AES-GCM),
// the kept signed answer verified again (Ed25519) and judged, as on every offline check.
func BenchmarkGuardOfflineCheck(b *testing.B) {
	v := loadVectors(b)
	for _, vector := range v.Guard {
		if vector.Name != "no-check-in-grace" {
			continue
		}
		o := vector.Options
		at := instant(b, o.Now)
		guard, err := keyturn.NewLicenseGuard(keyturn.GuardOptions{
			Client: keyturn.NewClient(keyturn.Options{
				BaseURL: "http://keyturn.invalid", APIKey: "kt_client_benchmark", NoRetries: true,
				HTTPClient: &http.Client{Transport: failingTransport{}},
			}),
			LicenseKey: o.LicenseKey, ProductID: o.ProductID, PublicKeys: v.pems(o.PublicKeys),
			Storage: memoryStorage{"keyturn-guard:" + o.ProductID: sealedRecord(b, vector.Proof, o.LicenseKey)},
			Now:     func() time.Time { return at },
		})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if result, _ := guard.Check(ctx); result.State != keyturn.GuardGrace {
				b.Fatalf("%+v", result)
			}
		}
		return
	}
	b.Fatal("no such vector")
}
