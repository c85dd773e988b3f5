package keyturn

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// WebhookTolerance is how far a delivery's timestamp may be from now, either way.
const WebhookTolerance = 5 * time.Minute

// Event is a Keyturn event as a webhook delivers it. Unknown types and actor kinds are accepted:
// new ones may appear.
type Event struct {
	ID         string         `json:"id"`
	Object     string         `json:"object"`
	Type       string         `json:"type"`
	OccurredAt string         `json:"occurredAt"`
	ProductID  *string        `json:"productId"`
	Actor      map[string]any `json:"actor"`
	RequestID  *string        `json:"requestId"`
	Data       map[string]any `json:"data"`
	// Raw is the whole event as parsed (numbers as float64).
	Raw map[string]any `json:"-"`
}

// WebhookInput is one request to an endpoint.
type WebhookInput struct {
	// Payload is the raw body, exactly as received.
	Payload []byte
	Header  http.Header
	// Secret is the endpoint's whsec_… secret.
	Secret string
	// Now is the time to judge the timestamp at; the zero time means time.Now().
	Now time.Time
}

var leadingInteger = regexp.MustCompile(`^\s*([+-]?\d+)`)

func webhookError(code, message string) *WebhookError {
	return &WebhookError{Code: code, Message: message}
}

// VerifyWebhook verifies a Keyturn webhook (Standard Webhooks: HMAC-SHA256 over id.timestamp.body,
// timestamps within 5 minutes) and returns its event, or a *WebhookError. Deduplicate on the
// event's ID: deliveries are at least once.
func VerifyWebhook(input WebhookInput) (*Event, error) {
	id := input.Header.Get("Webhook-Id")
	timestampText := input.Header.Get("Webhook-Timestamp")
	signatures := strings.Join(input.Header.Values("Webhook-Signature"), " ")
	if id == "" || timestampText == "" || signatures == "" {
		return nil, webhookError("malformed", "Missing required headers")
	}
	match := leadingInteger.FindStringSubmatch(timestampText)
	if match == nil {
		return nil, webhookError("malformed", "Invalid Signature Headers")
	}
	timestamp, err := strconv.ParseInt(match[1], 10, 64)
	if err != nil {
		return nil, webhookError("malformed", "Invalid Signature Headers")
	}
	now := input.Now
	if now.IsZero() {
		now = time.Now()
	}
	current := now.Unix()
	tolerance := int64(WebhookTolerance / time.Second)
	if current-timestamp > tolerance {
		return nil, webhookError("stale", "Message timestamp too old")
	}
	if timestamp > current+tolerance {
		return nil, webhookError("stale", "Message timestamp too new")
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(input.Secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, webhookError("invalid_signature", "The signature cannot be checked")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(input.Payload)
	expected := []byte("v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	matched := false
	for _, candidate := range strings.Split(signatures, " ") {
		if hmac.Equal([]byte(candidate), expected) {
			matched = true
		}
	}
	if !matched {
		return nil, webhookError("invalid_signature", "No matching signature found")
	}
	raw, isObject := parseObject(input.Payload)
	if !isObject {
		return nil, webhookError("not_an_event", "The payload is signed but is not a Keyturn event")
	}
	event := &Event{Raw: raw}
	if !isEvent(raw) || json.Unmarshal(input.Payload, event) != nil {
		return nil, webhookError("not_an_event", "The payload is signed but is not a Keyturn event")
	}
	return event, nil
}

func isEvent(raw map[string]any) bool {
	id, _ := raw["id"].(string)
	_, hasActor := raw["actor"].(map[string]any)
	_, hasData := raw["data"].(map[string]any)
	nullOrString := func(value any) bool { return value == nil || isString(value) }
	return strings.HasPrefix(id, "evt_") && raw["object"] == "Event" && isString(raw["type"]) &&
		isString(raw["occurredAt"]) && nullOrString(raw["productId"]) && hasActor &&
		nullOrString(raw["requestId"]) && hasData
}
