package keyturn_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

// The offline token check vs a bare Ed25519 verify of the same signature over the same bytes:
//
//	go test -run '^$' -bench . -benchtime 2s
func benchmarkVector(b *testing.B) (string, keyturn.TokenOptions) {
	v := loadVectors(b)
	for _, vector := range v.Tokens {
		if vector.Name == "valid-custom-fields-entitlements" {
			return vector.Token, keyturn.TokenOptions{
				PublicKeyPEM: v.Keys["product"].PublicKeyPEM, ProductID: vector.Options.ProductID,
				Now: instant(b, vector.Options.Now),
			}
		}
	}
	b.Fatal("no such vector")
	return "", keyturn.TokenOptions{}
}

func BenchmarkValidateLicenseToken(b *testing.B) {
	token, options := benchmarkVector(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := keyturn.ValidateLicenseToken(token, options); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBareEd25519Verify(b *testing.B) {
	token, options := benchmarkVector(b)
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
