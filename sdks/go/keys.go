package keyturn

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"sync"
)

type importedKey struct {
	kid string
	key ed25519.PublicKey
}

var (
	importedKeysMu sync.Mutex
	importedKeys   = map[string]importedKey{}
)

const maxImportedKeys = 32

// thumbprint is the RFC 7638 JWK thumbprint of an Ed25519 public key: the server's key id.
func thumbprint(key ed25519.PublicKey) string {
	canonical := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(key) + `"}`
	sum := sha256.Sum256([]byte(canonical))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// importKey reads a public key given as PEM (SPKI) or as a JWK's JSON, once per process.
func importKey(text string) (importedKey, error) {
	importedKeysMu.Lock()
	known, ok := importedKeys[text]
	importedKeysMu.Unlock()
	if ok {
		return known, nil
	}
	imported, err := parseKey(text)
	if err != nil {
		return importedKey{}, err
	}
	importedKeysMu.Lock()
	if len(importedKeys) >= maxImportedKeys {
		importedKeys = map[string]importedKey{}
	}
	importedKeys[text] = imported
	importedKeysMu.Unlock()
	return imported, nil
}

var errNotEd25519 = errors.New("keyturn: a public key must be an Ed25519 public key as PEM (SPKI) or JWK")

func parseKey(text string) (importedKey, error) {
	if block, _ := pem.Decode([]byte(text)); block != nil {
		parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return importedKey{}, errNotEd25519
		}
		key, ok := parsed.(ed25519.PublicKey)
		if !ok {
			return importedKey{}, errNotEd25519
		}
		return importedKey{kid: thumbprint(key), key: key}, nil
	}
	var jwk struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal([]byte(text), &jwk); err != nil || jwk.Kty != "OKP" || jwk.Crv != "Ed25519" {
		return importedKey{}, errNotEd25519
	}
	raw, err := base64.RawURLEncoding.DecodeString(jwk.X)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return importedKey{}, errNotEd25519
	}
	key := ed25519.PublicKey(raw)
	kid := jwk.Kid
	if kid == "" {
		kid = thumbprint(key)
	}
	return importedKey{kid: kid, key: key}, nil
}

func keyList(keys []string) ([]importedKey, error) {
	if len(keys) == 0 {
		return nil, errors.New("keyturn: at least one public key is needed")
	}
	list := make([]importedKey, 0, len(keys))
	for _, text := range keys {
		key, err := importKey(text)
		if err != nil {
			return nil, err
		}
		list = append(list, key)
	}
	return list, nil
}
