package keyturn_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// conformanceDir is the repository's conformance/ (or KEYTURN_CONFORMANCE_DIR).
func conformanceDir() string {
	if dir := os.Getenv("KEYTURN_CONFORMANCE_DIR"); dir != "" {
		return dir
	}
	return filepath.Join("..", "..", "conformance")
}

type expectation struct {
	Valid  bool            `json:"valid"`
	Error  string          `json:"error"`
	Result json.RawMessage `json:"result"`
	Event  json.RawMessage `json:"event"`
}

type vectors struct {
	Keys map[string]struct {
		PublicKeyPEM string `json:"publicKeyPem"`
	} `json:"keys"`
	Tokens []struct {
		Name    string `json:"name"`
		Token   string `json:"token"`
		Options struct {
			ProductID           string   `json:"productId"`
			PublicKeys          []string `json:"publicKeys"`
			Now                 string   `json:"now"`
			Fingerprint         string   `json:"fingerprint"`
			RequireEntitlements []string `json:"requireEntitlements"`
		} `json:"options"`
		Expect expectation `json:"expect"`
	} `json:"tokens"`
	SignedAnswers []struct {
		Name   string `json:"name"`
		Answer struct {
			Status  int               `json:"status"`
			Method  string            `json:"method"`
			Path    string            `json:"path"`
			Headers map[string]string `json:"headers"`
			Body    string            `json:"body"`
		} `json:"answer"`
		Check struct {
			PublicKeys       []string `json:"publicKeys"`
			Nonce            string   `json:"nonce"`
			Now              string   `json:"now"`
			ToleranceSeconds int      `json:"toleranceSeconds"`
		} `json:"check"`
		Expect expectation `json:"expect"`
	} `json:"signedAnswers"`
	Webhooks []struct {
		Name    string            `json:"name"`
		Secret  string            `json:"secret"`
		Payload string            `json:"payload"`
		Headers map[string]string `json:"headers"`
		Now     string            `json:"now"`
		Expect  expectation       `json:"expect"`
	} `json:"webhooks"`
	LicenseFiles []struct {
		Name    string `json:"name"`
		File    string `json:"file"`
		Options struct {
			ProductID           string   `json:"productId"`
			PublicKeys          []string `json:"publicKeys"`
			Now                 string   `json:"now"`
			LicenseKey          string   `json:"licenseKey"`
			Fingerprint         string   `json:"fingerprint"`
			RequireEntitlements []string `json:"requireEntitlements"`
		} `json:"options"`
		Expect expectation `json:"expect"`
	} `json:"licenseFiles"`
	Guard []struct {
		Name    string `json:"name"`
		Proof   string `json:"proof"`
		Options struct {
			ProductID   string   `json:"productId"`
			PublicKeys  []string `json:"publicKeys"`
			LicenseKey  string   `json:"licenseKey"`
			GracePeriod *int     `json:"gracePeriod"`
			Now         string   `json:"now"`
		} `json:"options"`
		Expect struct {
			State   string `json:"state"`
			Reason  string `json:"reason"`
			License *struct {
				ID        string  `json:"id"`
				Status    string  `json:"status"`
				ExpiresAt *string `json:"expiresAt"`
			} `json:"license"`
			Entitlements []string `json:"entitlements"`
			ValidUntil   *string  `json:"validUntil"`
		} `json:"expect"`
	} `json:"guard"`
	ActivationRequests []struct {
		Name       string `json:"name"`
		LicenseKey string `json:"licenseKey"`
		Payload    struct {
			ProductID   string `json:"productId"`
			Fingerprint string `json:"fingerprint"`
			Name        string `json:"name"`
			Platform    string `json:"platform"`
			Nonce       string `json:"nonce"`
			Created     string `json:"created"`
		} `json:"payload"`
		KeyHint string `json:"keyHint"`
		Request string `json:"request"`
	} `json:"activationRequests"`
	DeactivationCodes []struct {
		Name         string `json:"name"`
		ActivationID string `json:"activationId"`
		Secret       string `json:"secret"`
		Now          string `json:"now"`
		Code         string `json:"code"`
	} `json:"deactivationCodes"`
	Fingerprints []struct {
		Salt        string `json:"salt"`
		MachineID   string `json:"machineId"`
		Fingerprint string `json:"fingerprint"`
	} `json:"fingerprints"`
}

func loadVectors(t testing.TB) *vectors {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(conformanceDir(), "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Tokens) == 0 || len(v.SignedAnswers) == 0 || len(v.Webhooks) == 0 || len(v.Fingerprints) == 0 || len(v.LicenseFiles) == 0 ||
		len(v.ActivationRequests) == 0 || len(v.DeactivationCodes) == 0 {
		t.Fatal("conformance/vectors.json has an empty section")
	}
	return &v
}

func (v *vectors) pems(names []string) []string {
	list := make([]string, 0, len(names))
	for _, name := range names {
		list = append(list, v.Keys[name].PublicKeyPEM)
	}
	return list
}

func instant(t testing.TB, iso string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// scenario is the first line conformance/serve.mjs prints.
type scenario struct {
	BaseURL      string          `json:"baseUrl"`
	ClientKey    string          `json:"clientKey"`
	ProductID    string          `json:"productId"`
	PublicKeyPEM string          `json:"publicKeyPem"`
	PublicKeyJWK json.RawMessage `json:"publicKeyJwk"`
	Licenses     map[string]struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	} `json:"licenses"`
	GuessLimit int    `json:"guessLimit"`
	AdminKey   string `json:"adminKey"`
	// Stop stops the server (and deletes its database) before the test ends: an outage.
	Stop func() `json:"-"`
}

// startScenario runs `node conformance/serve.mjs` until the test ends (closing its stdin stops it).
func startScenario(t *testing.T) *scenario {
	t.Helper()
	node := os.Getenv("KEYTURN_NODE")
	if node == "" {
		node = "node"
	}
	command := exec.Command(node, filepath.Join(conformanceDir(), "serve.mjs"))
	command.Stderr = os.Stderr
	stdin, err := command.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := command.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := command.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			stdin.Close()
			done := make(chan error, 1)
			go func() { done <- command.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = command.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("conformance/serve.mjs did not start: %v", err)
	}
	var s scenario
	if err := json.Unmarshal(line, &s); err != nil {
		t.Fatal(err)
	}
	s.Stop = stop
	return &s
}
