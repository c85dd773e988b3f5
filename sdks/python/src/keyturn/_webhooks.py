"""Verifies Keyturn webhooks: Standard Webhooks (HMAC-SHA256 over ``id.timestamp.body`` with the
endpoint's ``whsec_`` secret, timestamps within 5 minutes either way), then the event's envelope.
Unknown event types and actor kinds are accepted: new ones may appear."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
from typing import Any, Dict, Mapping, Optional, Union

from ._errors import WebhookError
from ._time import Instant, epoch_seconds

#: How far a delivery's timestamp may be from now, either way.
WEBHOOK_TOLERANCE_SECONDS = 5 * 60
_leading_integer = re.compile(r"^\s*([+-]?\d+)")


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _is_event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("id"), str)
        and value["id"].startswith("evt_")
        and value.get("object") == "Event"
        and isinstance(value.get("type"), str)
        and isinstance(value.get("occurredAt"), str)
        and (value.get("productId") is None or isinstance(value.get("productId"), str))
        and isinstance(value.get("actor"), dict)
        and (value.get("requestId") is None or isinstance(value.get("requestId"), str))
        and isinstance(value.get("data"), dict)
    )


def verify_webhook(
    payload: Union[str, bytes],
    headers: Mapping[str, str],
    secret: str,
    *,
    now: Optional[Instant] = None,
) -> Dict[str, Any]:
    """Returns the event of a genuine, fresh delivery; raises :class:`keyturn.WebhookError`.

    ``payload`` is the raw body exactly as received. Deduplicate on ``event["id"]``: deliveries
    are at least once.
    """
    body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
    message_id = _header(headers, "webhook-id")
    timestamp_text = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not message_id or not timestamp_text or not signatures:
        raise WebhookError("malformed", "Missing required headers")
    parsed_timestamp = _leading_integer.match(timestamp_text)
    if parsed_timestamp is None:
        raise WebhookError("malformed", "Invalid Signature Headers")
    timestamp = int(parsed_timestamp.group(1))
    current = math.floor(epoch_seconds(now))
    if current - timestamp > WEBHOOK_TOLERANCE_SECONDS:
        raise WebhookError("stale", "Message timestamp too old")
    if timestamp > current + WEBHOOK_TOLERANCE_SECONDS:
        raise WebhookError("stale", "Message timestamp too new")
    try:
        key = base64.b64decode(secret[len("whsec_") :] if secret.startswith("whsec_") else secret, validate=True)
    except (binascii.Error, ValueError) as error:
        raise WebhookError("invalid_signature", "The signature cannot be checked") from error
    signed = f"{message_id}.{timestamp}.".encode("utf-8") + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
    if not any(hmac.compare_digest(candidate.encode(), expected.encode()) for candidate in signatures.split(" ")):
        raise WebhookError("invalid_signature", "No matching signature found")
    try:
        event = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError as error:
        raise WebhookError("not_an_event", "The payload is signed but is not JSON") from error
    if not _is_event(event):
        raise WebhookError("not_an_event", "The payload is signed but is not a Keyturn event")
    return dict(event)
