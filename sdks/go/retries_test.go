package keyturn_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	keyturn "github.com/keyturn/keyturn/sdks/go"
)

type scripted struct {
	status int
	header map[string]string
	body   string
	hang   bool
}

type recorded struct {
	method         string
	idempotencyKey string
}

// scriptedServer answers each request with the next scripted answer and records what it got.
func scriptedServer(t *testing.T, answers ...scripted) (*httptest.Server, *[]recorded) {
	var mu sync.Mutex
	var got []recorded
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		got = append(got, recorded{method: r.Method, idempotencyKey: r.Header.Get("Idempotency-Key")})
		answer := answers[0]
		answers = answers[1:]
		mu.Unlock()
		if answer.hang {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		for name, value := range answer.header {
			w.Header().Set(name, value)
		}
		w.WriteHeader(answer.status)
		_, _ = io.WriteString(w, answer.body)
	}))
	t.Cleanup(server.Close)
	return server, &got
}

func problem(status, code string) string {
	return `{"type":"about:blank","title":"x","status":` + status + `,"detail":"` + code + `","code":"` + code + `","requestId":"req_1"}`
}

func testClient(url string, waits *[]time.Duration, timeout time.Duration) *keyturn.Client {
	return keyturn.NewClient(keyturn.Options{
		BaseURL: url, APIKey: "kt_client_x", Timeout: timeout, Random: func() float64 { return 0.5 },
		Sleep: func(_ context.Context, d time.Duration) error { *waits = append(*waits, d); return nil },
	})
}

func TestAGetIsRetriedAfterA5xxHonouringRetryAfter(t *testing.T) {
	server, got := scriptedServer(t,
		scripted{status: 503, header: map[string]string{"Retry-After": "3"}, body: problem("503", "database_unavailable")},
		scripted{status: 200, body: `{"ok":1}`})
	var waits []time.Duration
	var out map[string]any
	if err := testClient(server.URL, &waits, time.Second).Request(context.Background(), "GET", "/licenses/lic_1", nil, &out); err != nil {
		t.Fatal(err)
	}
	if out["ok"] != float64(1) || len(*got) != 2 || len(waits) != 1 || waits[0] != 3*time.Second {
		t.Fatalf("out %v, requests %v, waits %v", out, *got, waits)
	}
}

func TestAPostIsRetriedWithTheSameIdempotencyKey(t *testing.T) {
	server, got := scriptedServer(t, scripted{status: 500, body: "<html>proxy error</html>"}, scripted{status: 204})
	var waits []time.Duration
	err := testClient(server.URL, &waits, time.Second).DeactivateLicense(context.Background(),
		keyturn.LicenseKeyRequest{Key: "KEY", ProductID: "prd_1", Fingerprint: "m-1"})
	if err != nil {
		t.Fatal(err)
	}
	requests := *got
	if len(requests) != 2 || requests[0].idempotencyKey == "" || requests[0].idempotencyKey != requests[1].idempotencyKey {
		t.Fatalf("requests %v", requests)
	}
	if len(waits) != 1 || waits[0] != 125*time.Millisecond { // full jitter: 0.5 × 250 ms
		t.Fatalf("waits %v", waits)
	}
}

func TestAPatchAndA4xxAreNotRetried(t *testing.T) {
	server, got := scriptedServer(t,
		scripted{status: 503, body: problem("503", "database_unavailable")},
		scripted{status: 409, body: problem("409", "activation_limit_reached")})
	var waits []time.Duration
	client := testClient(server.URL, &waits, time.Second)
	ctx := context.Background()
	apiError(t, client.Request(ctx, "PATCH", "/licenses/lic_1", map[string]any{"maxActivations": 2}, nil), 503, "database_unavailable")
	_, err := client.ActivateLicense(ctx, keyturn.LicenseKeyRequest{Key: "KEY", ProductID: "prd_1", Fingerprint: "m-1"}, "")
	apiError(t, err, 409, "activation_limit_reached")
	if len(*got) != 2 || len(waits) != 0 {
		t.Fatalf("requests %v, waits %v", *got, waits)
	}
}

func TestARetryAfterLongerThanTheLongestWaitIsNotWaitedFor(t *testing.T) {
	server, got := scriptedServer(t, scripted{status: 429, header: map[string]string{"Retry-After": "120"}, body: problem("429", "rate_limited")})
	var waits []time.Duration
	_, err := testClient(server.URL, &waits, time.Second).ValidateLicense(context.Background(), keyturn.LicenseKeyRequest{Key: "KEY", ProductID: "prd_1"})
	if refused := apiError(t, err, 429, "rate_limited"); refused.RetryAfter != 120*time.Second {
		t.Fatalf("Retry-After %v", refused.RetryAfter)
	}
	if len(*got) != 1 || len(waits) != 0 {
		t.Fatalf("requests %v, waits %v", *got, waits)
	}
}

func TestAServerThatDoesNotAnswerInTimeIsAConnectionErrorAfterTheRetries(t *testing.T) {
	server, got := scriptedServer(t, scripted{hang: true}, scripted{hang: true}, scripted{hang: true})
	var waits []time.Duration
	_, err := testClient(server.URL, &waits, 200*time.Millisecond).ValidateLicense(context.Background(), keyturn.LicenseKeyRequest{Key: "KEY", ProductID: "prd_1"})
	var connection *keyturn.ConnectionError
	if !errors.As(err, &connection) || len(*got) != 3 || len(waits) != 2 {
		t.Fatalf("err %v, requests %d, waits %v", err, len(*got), waits)
	}
}

func TestACancelledContextStopsTheCall(t *testing.T) {
	server, _ := scriptedServer(t, scripted{hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var waits []time.Duration
	_, err := testClient(server.URL, &waits, 10*time.Second).ValidateLicense(ctx, keyturn.LicenseKeyRequest{Key: "KEY", ProductID: "prd_1"})
	if !errors.Is(err, context.DeadlineExceeded) || len(waits) != 0 {
		t.Fatalf("err %v, waits %v", err, waits)
	}
}
