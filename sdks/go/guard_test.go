package keyturn_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

var guardMachine = keyturn.MachineFingerprint("keyturn-go-guard", "guard-machine")

// clock is the guard's injected clock: real time plus an offset the test moves.
type clock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *clock) set(offset time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = offset
}

func TestFileStorageWritesAtomicallyForThisUserOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keyturn")
	storage := keyturn.FileStorage{Dir: dir}
	if _, found, err := storage.Get("proof"); found || err != nil {
		t.Fatalf("empty store: %v %v", found, err)
	}
	for _, value := range []string{"first", "second"} {
		if err := storage.Set("proof", value); err != nil {
			t.Fatal(err)
		}
	}
	if value, found, err := storage.Get("proof"); value != "second" || !found || err != nil {
		t.Fatalf("got %q %v %v", value, found, err)
	}
	if info, err := os.Stat(filepath.Join(dir, "proof")); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", info, err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode: %v %v", info, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("a temporary file was left behind: %v", entries)
	}
	for i := 0; i < 2; i++ {
		if err := storage.Delete("proof"); err != nil {
			t.Fatal(err)
		}
	}
	if _, found, _ := storage.Get("proof"); found {
		t.Fatal("deleted, still found")
	}
	for _, bad := range []string{"", "../escape", ".hidden", "a/b"} {
		if err := storage.Set(bad, "x"); err == nil {
			t.Fatalf("key %q accepted", bad)
		}
	}
}

func TestNewLicenseGuardRefusesInvalidOptions(t *testing.T) {
	pem := loadVectors(t).pems([]string{"product"})
	client := keyturn.NewClient(keyturn.Options{BaseURL: "http://127.0.0.1:9", APIKey: "kt_client_x", PublicKeys: pem, NoRetries: true})
	valid := func() keyturn.GuardOptions {
		return keyturn.GuardOptions{
			Client: client, LicenseKey: "AAAAA-BBBBB-CCCCC-DDDDD-EEEEE", ProductID: "prd_guard", PublicKeys: pem,
			Storage: keyturn.FileStorage{Dir: t.TempDir()},
		}
	}
	invalid := map[string]func(*keyturn.GuardOptions){
		"no client": func(o *keyturn.GuardOptions) { o.Client = nil },
		"a client without keys": func(o *keyturn.GuardOptions) {
			o.Client = keyturn.NewClient(keyturn.Options{BaseURL: "http://127.0.0.1:9"})
		},
		"no license key":          func(o *keyturn.GuardOptions) { o.LicenseKey = " " },
		"no product":              func(o *keyturn.GuardOptions) { o.ProductID = "" },
		"no public key":           func(o *keyturn.GuardOptions) { o.PublicKeys = nil },
		"not a public key":        func(o *keyturn.GuardOptions) { o.PublicKeys = []string{"not a key"} },
		"a negative grace period": func(o *keyturn.GuardOptions) { o.GracePeriod = -time.Second },
		"an endless grace period": func(o *keyturn.GuardOptions) { o.GracePeriod = 1 << 62 },
		"a day of clock skew":     func(o *keyturn.GuardOptions) { o.ClockTolerance = 24 * time.Hour },
		"an empty entitlement":    func(o *keyturn.GuardOptions) { o.Entitlements = []string{""} },
	}
	for name, change := range invalid {
		options := valid()
		change(&options)
		if guard, err := keyturn.NewLicenseGuard(options); err == nil || guard != nil {
			t.Errorf("%s: accepted", name)
		}
	}

	// A clock that returns no time decides nothing: an error, and invalid.
	options := valid()
	options.Now = func() time.Time { return time.Time{} }
	guard, err := keyturn.NewLicenseGuard(options)
	if err != nil {
		t.Fatal(err)
	}
	if result, err := guard.Check(context.Background()); err == nil || result.State != keyturn.GuardInvalid {
		t.Fatalf("zero time: %+v %v", result, err)
	}

	// Unreachable with nothing stored.
	guard, err = keyturn.NewLicenseGuard(valid())
	if err != nil {
		t.Fatal(err)
	}
	result, err := guard.Check(context.Background())
	if err != nil || result.State != keyturn.GuardInvalid || result.Reason != "no_proof" || result.License != nil || result.ValidUntil != nil {
		t.Fatalf("unreachable, nothing stored: %+v %v", result, err)
	}
}

// TestLicenseGuardThroughAnOutage runs the guard against a real keyturn serve, then stops it.
func TestLicenseGuardThroughAnOutage(t *testing.T) {
	s := startScenario(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := keyturn.NewClient(keyturn.Options{
		BaseURL: s.BaseURL, APIKey: s.ClientKey, PublicKeys: []string{s.PublicKeyPEM}, Timeout: 10 * time.Second,
		RetryBaseDelay: 10 * time.Millisecond, // the outage's retries, quickly
	})
	admin := keyturn.NewClient(keyturn.Options{BaseURL: s.BaseURL, APIKey: s.AdminKey, Timeout: 10 * time.Second})
	storage := keyturn.FileStorage{Dir: t.TempDir()}
	now := &clock{}
	newLicense := func() (id, key string) {
		var license struct {
			ID  string `json:"id"`
			Key string `json:"key"`
		}
		body := map[string]any{"productId": s.ProductID, "maxActivations": 2}
		if err := admin.Request(ctx, "POST", "/licenses", body, &license); err != nil {
			t.Fatal(err)
		}
		return license.ID, license.Key
	}
	newGuard := func(key string, change func(*keyturn.GuardOptions)) *keyturn.LicenseGuard {
		options := keyturn.GuardOptions{
			Client: client, LicenseKey: key, ProductID: s.ProductID, PublicKeys: []string{string(s.PublicKeyJWK)},
			Fingerprint: guardMachine, Storage: storage, Now: now.now,
		}
		if change != nil {
			change(&options)
		}
		guard, err := keyturn.NewLicenseGuard(options)
		if err != nil {
			t.Fatal(err)
		}
		return guard
	}
	check := func(guard *keyturn.LicenseGuard, state keyturn.GuardState, reason string) keyturn.GuardResult {
		t.Helper()
		result, err := guard.Check(ctx)
		if err != nil || result.State != state || result.Reason != reason {
			t.Fatalf("want %s %s, got %+v %v", state, reason, result, err)
		}
		return result
	}
	activate := func(key string) {
		if _, err := client.ActivateLicense(ctx, keyturn.LicenseKeyRequest{Key: key, ProductID: s.ProductID, Fingerprint: guardMachine}, ""); err != nil {
			t.Fatal(err)
		}
	}

	licenseID, key := newLicense()
	activate(key)
	var changes []keyturn.GuardStateChange
	guard := newGuard(key, func(o *keyturn.GuardOptions) {
		o.OnChange = func(change keyturn.GuardStateChange) { changes = append(changes, change) }
	})
	online := check(guard, keyturn.GuardValid, "online")
	if online.License == nil || online.License.ID != licenseID || online.License.Status != "active" || online.ValidUntil != nil {
		t.Fatalf("online: %+v", online)
	}
	stored, found, _ := storage.Get(guard.StorageKey())
	if !found || strings.Contains(stored, key) {
		t.Fatalf("the proof is not stored sealed: %v", found)
	}
	if info, err := os.Stat(filepath.Join(storage.Dir, guard.StorageKey())); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("store mode: %v %v", info, err)
	}
	check(guard, keyturn.GuardValid, "online")
	if len(changes) != 1 {
		t.Fatalf("one change expected, got %d", len(changes))
	}

	// A license the server refuses: invalid with the server's reason, and the proof is dropped.
	revokedID, revokedKey := newLicense()
	activate(revokedKey)
	revokedGuard := newGuard(revokedKey, nil)
	check(revokedGuard, keyturn.GuardValid, "online")
	if err := admin.Request(ctx, "POST", "/licenses/"+revokedID+"/revoke", map[string]any{}, nil); err != nil {
		t.Fatal(err)
	}
	check(revokedGuard, keyturn.GuardInvalid, "revoked")
	if _, found, _ := storage.Get(revokedGuard.StorageKey()); found {
		t.Fatal("the revoked license's proof was kept")
	}
	_, idleKey := newLicense()
	check(newGuard(idleKey, nil), keyturn.GuardInvalid, "not_activated")
	stranger := keyturn.NewClient(keyturn.Options{
		BaseURL: s.BaseURL, APIKey: "kt_client_not-a-real-key-000000000000", PublicKeys: []string{s.PublicKeyPEM},
	})
	check(newGuard(key, func(o *keyturn.GuardOptions) { o.Client = stranger }), keyturn.GuardInvalid, "unauthenticated")

	// Licenses whose policy asks for a check-in every day: with the policy's 2 days of grace, and
	// with none set (the guard's own 12 hours then, or its default of none).
	const day = 24 * time.Hour
	newPolicy := func(gracePeriod any) string {
		var policy struct {
			ID string `json:"id"`
		}
		body := map[string]any{
			"productId": s.ProductID, "name": fmt.Sprintf("Daily check-in, grace %v", gracePeriod), "maxActivations": 2,
			"checkInInterval": int(day.Seconds()), "gracePeriod": gracePeriod,
		}
		if err := admin.Request(ctx, "POST", "/policies", body, &policy); err != nil {
			t.Fatal(err)
		}
		return policy.ID
	}
	newLicenseOf := func(policyID string) string {
		var license struct {
			Key string `json:"key"`
		}
		if err := admin.Request(ctx, "POST", "/licenses", map[string]any{"productId": s.ProductID, "policyId": policyID}, &license); err != nil {
			t.Fatal(err)
		}
		activate(license.Key)
		return license.Key
	}
	halfDay := func(o *keyturn.GuardOptions) { o.GracePeriod = day / 2 }
	daily := newGuard(newLicenseOf(newPolicy(int(2*day.Seconds()))), halfDay)
	before := time.Now()
	onlineDaily := check(daily, keyturn.GuardValid, "online")
	after := time.Now()
	if onlineDaily.ValidUntil == nil || onlineDaily.ValidUntil.Before(before.Add(day-time.Second)) || onlineDaily.ValidUntil.After(after.Add(day+time.Second)) {
		t.Fatalf("online with a check-in: %+v", onlineDaily)
	}
	checkInBy := *onlineDaily.ValidUntil
	ownGraceKey := newLicenseOf(newPolicy(nil))
	ownGrace := newGuard(ownGraceKey, halfDay)
	check(ownGrace, keyturn.GuardValid, "online")
	noGrace := newGuard(ownGraceKey, nil)
	check(noGrace, keyturn.GuardValid, "online")

	// The outage. (Idle keep-alive connections closed first, else the server's graceful stop waits for them.)
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	s.Stop()

	// Before the check-in deadline: valid; then the policy's grace (it wins over the option); then invalid.
	if offline := check(daily, keyturn.GuardValid, "offline"); !offline.ValidUntil.Equal(checkInBy) {
		t.Fatalf("offline with a check-in: %+v", offline)
	}
	now.set(day + day/2)
	grace := check(daily, keyturn.GuardGrace, "check_in_overdue")
	if grace.ValidUntil == nil || !grace.ValidUntil.Equal(checkInBy.Add(2*day)) || !reflect.DeepEqual(grace.License, onlineDaily.License) {
		t.Fatalf("grace: %+v", grace)
	}
	check(ownGrace, keyturn.GuardInvalid, "grace_expired")
	now.set(day + day/4)
	check(ownGrace, keyturn.GuardGrace, "check_in_overdue")
	check(noGrace, keyturn.GuardInvalid, "grace_expired")
	now.set(3*day + day/2)
	if expired := check(daily, keyturn.GuardInvalid, "grace_expired"); expired.ValidUntil != nil {
		t.Fatalf("grace expired: %+v", expired)
	}
	now.set(0)
	offline := check(guard, keyturn.GuardValid, "offline")
	if !reflect.DeepEqual(offline.License, online.License) || len(changes) != 2 || !reflect.DeepEqual(*changes[1].Previous, online) {
		t.Fatalf("offline: %+v, changes %+v", offline, changes)
	}
	check(newGuard(key, nil), keyturn.GuardValid, "offline") // the application restarted
	// Never across machines or licenses.
	check(newGuard(key, func(o *keyturn.GuardOptions) { o.Fingerprint = "another-machine" }), keyturn.GuardInvalid, "no_proof")
	other := newGuard(idleKey, nil)
	if err := storage.Set(other.StorageKey(), stored); err != nil {
		t.Fatal(err)
	}
	check(other, keyturn.GuardInvalid, "no_proof")

	// The clock wound back past the last signed server time: refused, by a restarted guard too.
	now.set(-time.Hour)
	check(guard, keyturn.GuardInvalid, "clock_tampered")
	check(newGuard(key, nil), keyturn.GuardInvalid, "clock_tampered")
	now.set(-time.Minute) // within the tolerance
	check(guard, keyturn.GuardValid, "offline")

	// The stored license file runs out (a client key gets at most the product's clientTokenTtl, 7 days).
	now.set(8 * 24 * time.Hour)
	check(guard, keyturn.GuardInvalid, "expired")
	now.set(0)

	// A tampered or unreadable store counts as absent.
	tampered := stored[:len(stored)-8] + "AAAAAAAA"
	if strings.HasSuffix(stored, "AAAAAAAA") {
		tampered = stored[:len(stored)-8] + "BBBBBBBB"
	}
	for _, value := range []string{tampered, "not a proof"} {
		if err := storage.Set(guard.StorageKey(), value); err != nil {
			t.Fatal(err)
		}
		check(guard, keyturn.GuardInvalid, "no_proof")
	}
	if err := guard.Forget(); err != nil {
		t.Fatal(err)
	}
	check(guard, keyturn.GuardInvalid, "no_proof")
}
