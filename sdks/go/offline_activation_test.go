package keyturn_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

// readRequest is a request file's payload, HMAC part and signed part, read with the standard library.
func readRequest(t *testing.T, text string) (payload map[string]string, keys []string, signed, mac string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if lines[0] != "-----BEGIN KEYTURN ACTIVATION REQUEST-----" || lines[len(lines)-2] != "-----END KEYTURN ACTIVATION REQUEST-----" || lines[len(lines)-1] != "" {
		t.Fatalf("not armoured: %q", text)
	}
	for _, line := range lines[1 : len(lines)-2] {
		if len(line) > 64 {
			t.Fatalf("a line of %d characters", len(line))
		}
	}
	parts := strings.Split(strings.Join(lines[1:len(lines)-2], ""), ".")
	data, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &payload); err != nil {
		t.Fatal(err)
	}
	decoder := json.NewDecoder(strings.NewReader(string(data)))
	decoder.Token()
	for decoder.More() {
		key, _ := decoder.Token()
		keys = append(keys, key.(string))
		decoder.Token()
	}
	return payload, keys, parts[0], parts[1]
}

func TestActivationRequestVectors(t *testing.T) {
	v := loadVectors(t)
	for _, vector := range v.ActivationRequests {
		vector := vector
		t.Run(vector.Name, func(t *testing.T) {
			p := vector.Payload
			got := keyturn.EncodeActivationRequest(vector.LicenseKey, p.ProductID, p.Fingerprint, p.Name, p.Platform, p.Nonce, p.Created)
			if got != vector.Request {
				t.Fatalf("got\n%s\nwant\n%s", got, vector.Request)
			}
			if payload, _, _, _ := readRequest(t, got); payload["keyHint"] != vector.KeyHint {
				t.Errorf("keyHint %s, want %s", payload["keyHint"], vector.KeyHint)
			}
			// The public function: the same file but for a fresh nonce.
			written, err := keyturn.CreateActivationRequest(keyturn.ActivationRequestOptions{
				LicenseKey: vector.LicenseKey, ProductID: p.ProductID, Fingerprint: p.Fingerprint,
				Name: p.Name, Platform: p.Platform, Now: instant(t, p.Created),
			})
			if err != nil {
				t.Fatal(err)
			}
			payload, _, _, _ := readRequest(t, written)
			nonce := payload["nonce"]
			if !regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`).MatchString(nonce) || nonce == p.Nonce {
				t.Errorf("nonce %q", nonce)
			}
			if want := keyturn.EncodeActivationRequest(vector.LicenseKey, p.ProductID, p.Fingerprint, p.Name, p.Platform, nonce, p.Created); written != want {
				t.Errorf("got\n%s\nwant\n%s", written, want)
			}
		})
	}
}

func TestActivationRequestTimesKeepMillisecondsAndTheHMACIsKeyedByTheKeyAsStored(t *testing.T) {
	written, err := keyturn.CreateActivationRequest(keyturn.ActivationRequestOptions{
		LicenseKey: "7k3qdm9xtb2vhcr8pnw f4zj6a", ProductID: "prd_x", Fingerprint: "machine",
		Now: time.Date(2030, 1, 1, 0, 0, 0, 999_999_999, time.FixedZone("CET", 3600)),
	})
	if err != nil {
		t.Fatal(err)
	}
	payload, keys, signed, mac := readRequest(t, written)
	if payload["created"] != "2029-12-31T23:00:00.999Z" {
		t.Errorf("created %s", payload["created"])
	}
	if got := strings.Join(keys, ","); got != "format,productId,keyHint,fingerprint,nonce,created" {
		t.Errorf("fields %s", got)
	}
	h := hmac.New(sha256.New, []byte("7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A"))
	h.Write([]byte(signed))
	if base64.RawURLEncoding.EncodeToString(h.Sum(nil)) != mac {
		t.Error("the HMAC is not keyed by the canonical key")
	}
}

func optionOf(err error) string {
	var invalid *keyturn.InvalidOptionError
	if errors.As(err, &invalid) {
		return invalid.Option
	}
	return "no InvalidOptionError"
}

func TestActivationRequestBadOptionsAreRefused(t *testing.T) {
	good := keyturn.ActivationRequestOptions{LicenseKey: "Acme-1", ProductID: "prd_x", Fingerprint: "machine"}
	cases := []struct {
		option string
		change func(o *keyturn.ActivationRequestOptions)
	}{
		{"Now", func(o *keyturn.ActivationRequestOptions) { o.Now = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"Now", func(o *keyturn.ActivationRequestOptions) { o.Now = time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC) }},
		{"Now", func(o *keyturn.ActivationRequestOptions) { o.Now = time.Unix(math.MaxInt64/2, 0) }},
		{"ProductID", func(o *keyturn.ActivationRequestOptions) { o.ProductID = "" }},
		{"ProductID", func(o *keyturn.ActivationRequestOptions) { o.ProductID = strings.Repeat("p", 65) }},
		{"Fingerprint", func(o *keyturn.ActivationRequestOptions) { o.Fingerprint = "" }},
		{"Fingerprint", func(o *keyturn.ActivationRequestOptions) { o.Fingerprint = strings.Repeat("f", 257) }},
		{"Name", func(o *keyturn.ActivationRequestOptions) { o.Name = strings.Repeat("n", 201) }},
		{"Name", func(o *keyturn.ActivationRequestOptions) { o.Name = strings.Repeat("\U0001f600", 101) }},
		{"Name", func(o *keyturn.ActivationRequestOptions) { o.Name = "not \xff UTF-8" }},
		{"Platform", func(o *keyturn.ActivationRequestOptions) { o.Platform = strings.Repeat("p", 101) }},
		{"LicenseKey", func(o *keyturn.ActivationRequestOptions) { o.LicenseKey = "" }},
		{"LicenseKey", func(o *keyturn.ActivationRequestOptions) { o.LicenseKey = strings.Repeat("k", 257) }},
	}
	for _, c := range cases {
		options := good
		c.change(&options)
		written, err := keyturn.CreateActivationRequest(options)
		if got := optionOf(err); got != c.option || written != "" {
			t.Errorf("%s: refused as %s (%v), wrote %q", c.option, got, err, written)
		}
	}
	// Limits are counted as JavaScript counts them: 100 emoji are 200 UTF-16 units.
	options := good
	options.Name, options.Fingerprint = strings.Repeat("\U0001f600", 100), strings.Repeat("f", 256)
	if _, err := keyturn.CreateActivationRequest(options); err != nil {
		t.Error(err)
	}
}

func TestDeactivationCodeVectors(t *testing.T) {
	v := loadVectors(t)
	for _, vector := range v.DeactivationCodes {
		vector := vector
		t.Run(vector.Name, func(t *testing.T) {
			code, err := keyturn.CreateDeactivationCode(keyturn.DeactivationCodeOptions{
				ActivationID: vector.ActivationID, Secret: vector.Secret, Now: instant(t, vector.Now),
			})
			if err != nil || code != vector.Code {
				t.Errorf("got %q (%v), want %q", code, err, vector.Code)
			}
		})
	}
	code, err := keyturn.CreateDeactivationCode(keyturn.DeactivationCodeOptions{ActivationID: "act_x", Secret: v.DeactivationCodes[0].Secret})
	if err != nil || !regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$`).MatchString(code) {
		t.Errorf("code %q (%v)", code, err)
	}
}

func TestDeactivationCodeBadOptionsAreRefused(t *testing.T) {
	secret := loadVectors(t).DeactivationCodes[0].Secret
	cases := []struct {
		option string
		change func(o *keyturn.DeactivationCodeOptions)
	}{
		{"Now", func(o *keyturn.DeactivationCodeOptions) { o.Now = time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC) }},
		{"Now", func(o *keyturn.DeactivationCodeOptions) { o.Now = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"ActivationID", func(o *keyturn.DeactivationCodeOptions) { o.ActivationID = "" }},
		{"ActivationID", func(o *keyturn.DeactivationCodeOptions) { o.ActivationID = strings.Repeat("a", 65) }},
		{"Secret", func(o *keyturn.DeactivationCodeOptions) { o.Secret = "" }},
		{"Secret", func(o *keyturn.DeactivationCodeOptions) { o.Secret = secret[:42] }},
		{"Secret", func(o *keyturn.DeactivationCodeOptions) { o.Secret = secret + "A" }},
		{"Secret", func(o *keyturn.DeactivationCodeOptions) { o.Secret = secret[:42] + "=" }},
		{"Secret", func(o *keyturn.DeactivationCodeOptions) { o.Secret = secret + "\n" }},
	}
	for _, c := range cases {
		options := keyturn.DeactivationCodeOptions{ActivationID: "act_x", Secret: secret, Now: time.Unix(1_893_456_000, 0)}
		c.change(&options)
		code, err := keyturn.CreateDeactivationCode(options)
		if got := optionOf(err); got != c.option || code != "" {
			t.Errorf("%s: refused as %s (%v), wrote %q", c.option, got, err, code)
		}
	}
}

// The non-ASCII characters JavaScript's toUpperCase turns into ASCII (ß → SS, ı → I, ſ → S, the
// Latin ligatures) and those its \s removes, found by enumerating every code point in Node:
// exactly these, and nothing else, may help make a Keyturn-shaped key.
func TestCanonicalLicenseKeyReadsUnicodeAsJavaScriptDoes(t *testing.T) {
	want := map[rune]string{0xdf: "SS", 0x131: "I", 0x17f: "S", 0xfb00: "FF", 0xfb01: "FI", 0xfb02: "FL", 0xfb03: "FFI", 0xfb04: "FFL", 0xfb05: "ST", 0xfb06: "ST"}
	for _, separator := range []rune{0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff} {
		want[separator] = ""
	}
	// The Basic Multilingual Plane: no character beyond it is whitespace or has an ASCII upper case.
	for r := rune(0x80); r <= 0xffff; r++ {
		if r >= 0xd800 && r < 0xe000 {
			continue
		}
		// Padded with Z to 25 characters: canonical only when r is removed or becomes ASCII Crockford.
		expected, ok := want[r]
		key := string(r) + strings.Repeat("Z", 25-len(expected))
		got := keyturn.CanonicalLicenseKey(key)
		if ok != (got != key) {
			t.Errorf("U+%04X: canonical %q", r, got)
		}
	}
}

func TestActivationRequestYearsBefore1000HaveFourDigits(t *testing.T) {
	written, err := keyturn.CreateActivationRequest(keyturn.ActivationRequestOptions{
		LicenseKey: "Acme-1", ProductID: "prd_x", Fingerprint: "machine", Now: time.Date(999, 12, 31, 23, 59, 59, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	if payload, _, _, _ := readRequest(t, written); payload["created"] != "0999-12-31T23:59:59.000Z" {
		t.Errorf("created %s", payload["created"])
	}
}
