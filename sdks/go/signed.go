package keyturn

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const (
	signatureLabel = "keyturn"
	signAlgorithm  = "ed25519"
	// AnswerCoveredComponents are the components a signed answer covers, in order: the answer's
	// status, digest and date, the request's method and path.
	AnswerCoveredComponents = `("@status" "content-digest" "date" "@method";req "@path";req)`
	// DefaultSignatureTolerance is how far a signed answer's created and Date may be from now.
	DefaultSignatureTolerance = 300 * time.Second
)

var (
	inputPattern = regexp.MustCompile(`^` + signatureLabel + `=(` + regexp.QuoteMeta(AnswerCoveredComponents) +
		`;created=(\d{1,12});keyid="([A-Za-z0-9_-]{1,128})";alg="` + signAlgorithm + `")$`)
	signaturePattern = regexp.MustCompile(`^` + signatureLabel + `=:([A-Za-z0-9+/]+={0,2}):$`)
	digestPattern    = regexp.MustCompile(`(?:^|,\s*)sha-256=:([A-Za-z0-9+/]+={0,2}):`)
)

// SignedAnswer is an answer as received, with the request it answers.
type SignedAnswer struct {
	Status int
	Header http.Header
	// Body is the body exactly as received.
	Body []byte
	// Method is the request's method, upper case.
	Method string
	// Path is the request's path, without the query.
	Path string
}

// SignatureCheck says whose signature, for which request, and when.
type SignatureCheck struct {
	// PublicKeys are the product's public keys (PEM or JWK JSON), current and retired.
	PublicKeys []string
	// Nonce is the nonce the request sent.
	Nonce string
	// Now is the time to judge at; the zero time means time.Now().
	Now time.Time
	// Tolerance is how far created and Date may be from Now (zero: DefaultSignatureTolerance).
	Tolerance time.Duration
}

// NewNonce returns a fresh random nonce: 128 bits, hex.
func NewNonce() string {
	bytes := make([]byte, 16)
	if _, err := rand.Read(bytes); err != nil {
		panic(err)
	}
	return hex.EncodeToString(bytes)
}

// AnswerSignatureBase is the RFC 9421 signature base: one line per covered component, then @signature-params.
func AnswerSignatureBase(status int, contentDigest, date, method, path, signatureParams string) string {
	return strings.Join([]string{
		`"@status": ` + strconv.Itoa(status),
		`"content-digest": ` + strings.TrimSpace(contentDigest),
		`"date": ` + strings.TrimSpace(date),
		`"@method";req: ` + method,
		`"@path";req: ` + path,
		`"@signature-params": ` + signatureParams,
	}, "\n")
}

func signatureError(code, message string) *SignatureError {
	return &SignatureError{Code: code, Message: message}
}

func headerValue(header http.Header, name string) (string, bool) {
	values := header.Values(name)
	if len(values) == 0 {
		return "", false
	}
	return strings.TrimSpace(strings.Join(values, ", ")), true
}

// VerifySignedAnswer returns nil when the answer is signed for this request by one of the keys,
// else a *SignatureError (or an error for a key that is not Ed25519).
func VerifySignedAnswer(answer SignedAnswer, check SignatureCheck) error {
	created, date, err := checkAnswerSignature(answer, check.PublicKeys, check.Nonce)
	if err != nil {
		return err
	}
	now := check.Now
	if now.IsZero() {
		now = time.Now()
	}
	tolerance := check.Tolerance
	if tolerance == 0 {
		tolerance = DefaultSignatureTolerance
	}
	current := float64(now.UnixMilli()) / 1000
	dated, dateErr := http.ParseTime(date)
	if dateErr != nil || math.Abs(current-float64(created)) > tolerance.Seconds() ||
		math.Abs(current-float64(dated.Unix())) > tolerance.Seconds() {
		stale := signatureError("stale", "The answer was signed at "+time.Unix(created, 0).UTC().Format(time.RFC3339)+
			", more than "+tolerance.String()+" from now.")
		if dateErr == nil {
			stale.SignedAt = laterOf(time.Unix(created, 0), dated)
		}
		return stale
	}
	return nil
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// verifyKeptAnswer checks a kept answer again, whatever its age (the license guard's stored
// proof), and returns when the server signed it: the later of created and the signed Date.
func verifyKeptAnswer(answer SignedAnswer, publicKeys []string, nonce string) (time.Time, error) {
	created, date, err := checkAnswerSignature(answer, publicKeys, nonce)
	if err != nil {
		return time.Time{}, err
	}
	dated, err := http.ParseTime(date)
	if err != nil {
		return time.Time{}, signatureError("malformed", "The signed Date header is not a date.")
	}
	return laterOf(time.Unix(created, 0), dated), nil
}

// keptHeaders are the headers a kept answer keeps: those its signature covers or needs.
var keptHeaders = []string{"signature-input", "signature", "content-digest", "date"}

// keptAnswerText is a signed answer as JSON text (the JavaScript client's form).
type keptAnswerText struct {
	Status  int               `json:"status"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Nonce   string            `json:"nonce"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// serializeSignedAnswer is the answer and the nonce it echoes as JSON text; readSignedAnswer takes it back.
func serializeSignedAnswer(answer SignedAnswer, nonce string) (string, error) {
	kept := keptAnswerText{Status: answer.Status, Method: answer.Method, Path: answer.Path, Nonce: nonce, Headers: map[string]string{}}
	for _, name := range keptHeaders {
		kept.Headers[name], _ = headerValue(answer.Header, name)
	}
	kept.Body = strings.ToValidUTF8(string(answer.Body), "\uFFFD")
	text, err := json.Marshal(kept)
	return string(text), err
}

// readSignedAnswer verifies a serialised answer again (not its age): the answer, its parsed body
// and when it was signed, or a *SignatureError (malformed for text that is not a kept answer).
func readSignedAnswer(text string, publicKeys []string) (SignedAnswer, map[string]any, time.Time, error) {
	malformed := signatureError("malformed", "The kept answer is not one this client wrote.")
	var kept keptAnswerText
	if json.Unmarshal([]byte(text), &kept) != nil || kept.Headers == nil {
		return SignedAnswer{}, nil, time.Time{}, malformed
	}
	header := http.Header{}
	for _, name := range keptHeaders {
		value, found := kept.Headers[name]
		if !found {
			return SignedAnswer{}, nil, time.Time{}, malformed
		}
		header.Set(name, value)
	}
	var body map[string]any
	if json.Unmarshal([]byte(kept.Body), &body) != nil {
		return SignedAnswer{}, nil, time.Time{}, malformed
	}
	answer := SignedAnswer{Status: kept.Status, Header: header, Body: []byte(kept.Body), Method: kept.Method, Path: kept.Path}
	signedAt, err := verifyKeptAnswer(answer, publicKeys, kept.Nonce)
	return answer, body, signedAt, err
}

// checkAnswerSignature is everything but the freshness; it returns the signed created (epoch
// seconds) and Date.
func checkAnswerSignature(answer SignedAnswer, publicKeys []string, nonce string) (int64, string, error) {
	input, hasInput := headerValue(answer.Header, "Signature-Input")
	signature, hasSignature := headerValue(answer.Header, "Signature")
	digest, hasDigest := headerValue(answer.Header, "Content-Digest")
	date, hasDate := headerValue(answer.Header, "Date")
	if !hasInput || !hasSignature || !hasDigest || !hasDate {
		return 0, "", signatureError("unsigned", "The answer carries no signature (Signature, Signature-Input, Content-Digest and Date are required).")
	}
	parsedInput := inputPattern.FindStringSubmatch(input)
	parsedSignature := signaturePattern.FindStringSubmatch(signature)
	sentDigest := digestPattern.FindStringSubmatch(digest)
	if parsedInput == nil || parsedSignature == nil || sentDigest == nil {
		return 0, "", signatureError("malformed", "The signature headers are not in the form Keyturn signs.")
	}
	signatureParams, createdText, keyID := parsedInput[1], parsedInput[2], parsedInput[3]
	keys, err := keyList(publicKeys)
	if err != nil {
		return 0, "", err
	}
	var key ed25519.PublicKey
	for _, candidate := range keys {
		if candidate.kid == keyID {
			key = candidate.key
			break
		}
	}
	if key == nil {
		return 0, "", signatureError("unknown_key", "No configured public key has the answer's key id ("+keyID+").")
	}
	base := AnswerSignatureBase(answer.Status, digest, date, answer.Method, answer.Path, signatureParams)
	signatureBytes, err := base64.StdEncoding.DecodeString(parsedSignature[1])
	if err != nil || !ed25519.Verify(key, []byte(base), signatureBytes) {
		return 0, "", signatureError("invalid_signature", "The answer's signature does not verify.")
	}
	sum := sha256.Sum256(answer.Body)
	if base64.StdEncoding.EncodeToString(sum[:]) != sentDigest[1] {
		return 0, "", signatureError("digest_mismatch", "The answer's body does not match its signed digest.")
	}
	// A map, not a struct: encoding/json matches struct fields case-insensitively.
	var body map[string]any
	parseErr := json.Unmarshal(answer.Body, &body)
	if echoed, isText := body["nonce"].(string); parseErr != nil || !isText || echoed != nonce {
		return 0, "", signatureError("nonce_mismatch", "The answer is not for this request (another nonce).")
	}
	created, err := strconv.ParseInt(createdText, 10, 64)
	if err != nil {
		return 0, "", signatureError("malformed", "The signature headers are not in the form Keyturn signs.")
	}
	return created, date, nil
}
