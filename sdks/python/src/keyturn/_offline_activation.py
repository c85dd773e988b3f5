"""Offline activation on the machine (docs/guides/offline.md, "Air-gapped machines"): the activation
request file it hands to the vendor, and the deactivation code it prints when it gives its seat back.
Byte for byte what the JavaScript client's ``createActivationRequest`` and ``createDeactivationCode``
write (conformance/vectors.json)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import os
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Dict, Optional

from ._license_files import canonical_license_key
from ._time import Instant

ACTIVATION_REQUEST_FORMAT = "keyturn-activation-request/1"
ACTIVATION_REQUEST_BEGIN = "-----BEGIN KEYTURN ACTIVATION REQUEST-----"
ACTIVATION_REQUEST_END = "-----END KEYTURN ACTIVATION REQUEST-----"
_KEY_HINT_BYTES = 12
_LINE_LENGTH = 64
_CODE_CONTEXT = "keyturn-deactivation-code/1"
_CODE_MAC_BYTES = 6
_CODE_GROUP_LENGTH = 4
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_SECRET = re.compile(r"[A-Za-z0-9_-]{43}")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class InvalidOptionError(ValueError):
    """An argument of ``create_activation_request`` or ``create_deactivation_code`` is invalid (a
    programming error in the caller): nothing is written rather than a file or code the server
    would refuse or read differently. ``option`` names the argument."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _utf16_length(text: str) -> int:
    """The length JavaScript gives a string: the limits are counted as the JavaScript client counts them."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _require_text(option: str, value: Any, maximum: int) -> str:
    if not isinstance(value, str) or not 1 <= _utf16_length(value) <= maximum:
        raise InvalidOptionError(option, f"{option} must be a string of 1 to {maximum} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidOptionError(option, f"{option} must be valid Unicode text (no lone surrogates)") from error
    return value


def _milliseconds(now: Optional[Instant], option: str = "now") -> int:
    """``now`` as whole milliseconds since the epoch (rounded down, as a JavaScript Date holds it)."""
    if now is None:
        now = datetime.now(timezone.utc)
    if isinstance(now, datetime):
        aware = now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)
        return (aware - _EPOCH) // timedelta(milliseconds=1)
    if isinstance(now, bool) or not isinstance(now, (int, float)) or not math.isfinite(now):
        raise InvalidOptionError(option, "now must be a datetime or a finite number of seconds since the epoch")
    # Decimal of the float's shortest repr: 1.001 s is 1001 ms, not 1000.
    return math.floor(Decimal(now if isinstance(now, int) else repr(now)) * 1000)


def _iso_time(milliseconds: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.sssZ``, as JavaScript's ``toISOString``; years 1 to 9999 only."""
    try:
        at = _EPOCH + timedelta(milliseconds=milliseconds)
    except OverflowError as error:  # outside datetime's years 1 to 9999
        raise InvalidOptionError("now", "now must be a time in the years 1 to 9999") from error
    # Not strftime: its %Y does not pad years before 1000 to four digits on every platform.
    return (
        f"{at.year:04d}-{at.month:02d}-{at.day:02d}T{at.hour:02d}:{at.minute:02d}:{at.second:02d}"
        f".{at.microsecond // 1000:03d}Z"
    )


def _json_text(payload: Dict[str, str]) -> str:
    """``JSON.stringify``'s output: no spaces, non-ASCII as UTF-8, control characters escaped as
    JavaScript escapes them (json.dumps does the same with ensure_ascii off)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _encode_activation_request(license_key: str, fields: Dict[str, str]) -> str:
    """The request file for these fields (``product_id``, ``fingerprint``, optional ``name`` and
    ``platform``, ``nonce``, ``created``); internal: the conformance vectors fix the nonce and time."""
    key = canonical_license_key(license_key).encode("utf-8")
    payload: Dict[str, str] = {
        "format": ACTIVATION_REQUEST_FORMAT,
        "productId": fields["product_id"],
        "keyHint": _base64url(hashlib.sha256(key).digest()[:_KEY_HINT_BYTES]),
        "fingerprint": fields["fingerprint"],
    }
    for name in ("name", "platform"):
        if fields.get(name) is not None:
            payload[name] = fields[name]
    payload["nonce"] = fields["nonce"]
    payload["created"] = fields["created"]
    signed_part = _base64url(_json_text(payload).encode("utf-8"))
    mac = _base64url(hmac.new(key, signed_part.encode("ascii"), hashlib.sha256).digest())
    body = f"{signed_part}.{mac}"
    lines = [body[i : i + _LINE_LENGTH] for i in range(0, len(body), _LINE_LENGTH)]
    return "\n".join([ACTIVATION_REQUEST_BEGIN, *lines, ACTIVATION_REQUEST_END]) + "\n"


def create_activation_request(
    license_key: str,
    product_id: str,
    fingerprint: str,
    *,
    name: Optional[str] = None,
    platform: Optional[str] = None,
    now: Optional[Instant] = None,
) -> str:
    """Writes an activation request file for a machine without a network: the text to hand to the
    vendor (``keyturn offline activate``, the dashboard, ``POST /licenses/activate-offline``), who
    answers with the machine's license file. It holds no license key: an HMAC keyed by it proves
    the key.

    ``license_key`` is the key the user entered (a Keyturn key in any spelling; a custom key
    exactly); ``fingerprint`` this machine's (:func:`machine_fingerprint`); ``name`` the
    activation's name (1 to 200 characters), ``platform`` its ``metadata.platform`` (1 to 100);
    ``now`` the request's time (default: now). Invalid arguments raise :class:`InvalidOptionError`."""
    created = _iso_time(_milliseconds(now))
    _require_text("product_id", product_id, 64)
    _require_text("fingerprint", fingerprint, 256)
    if name is not None:
        _require_text("name", name, 200)
    if platform is not None:
        _require_text("platform", platform, 100)
    _require_text("license_key", license_key, 256)
    fields = {"product_id": product_id, "fingerprint": fingerprint, "nonce": _base64url(os.urandom(16)), "created": created}
    if name is not None:
        fields["name"] = name
    if platform is not None:
        fields["platform"] = platform
    return _encode_activation_request(license_key, fields)


def create_deactivation_code(activation_id: str, secret: str, *, now: Optional[Instant] = None) -> str:
    """The code that proves to the vendor that this machine gave its seat back: its time (to the
    minute) and an HMAC of the activation id and that time under the machine's deactivation secret,
    as 16 characters in groups of four (``Q2M4-7XKD-3H9P-T6WB``) for reading over the phone.

    ``activation_id`` and ``secret`` are :func:`verify_license_file`'s ``activation_id`` and
    ``deactivation_secret`` (only files from offline activation carry one). Delete the machine's
    license file before showing the code. Invalid arguments (a time outside the years 1970 to 9999, a
    secret that is not 43 base64url characters) raise :class:`InvalidOptionError`."""
    milliseconds = _milliseconds(now)
    _iso_time(milliseconds)  # years 1 to 9999
    if milliseconds < 0:
        raise InvalidOptionError("now", "now must be a time in the years 1970 to 9999")
    minute = milliseconds // 60_000  # below 2**32 (four bytes) until the year 10136
    _require_text("activation_id", activation_id, 64)
    if not isinstance(secret, str) or not _SECRET.fullmatch(secret):
        raise InvalidOptionError("secret", "secret must be the 43-character deactivation secret of a machine file")
    key = base64.urlsafe_b64decode(secret + "=")
    message = f"{_CODE_CONTEXT}\n{activation_id}\n{minute}".encode("utf-8")
    mac = hmac.new(key, message, hashlib.sha256).digest()[:_CODE_MAC_BYTES]
    bits = int.from_bytes(minute.to_bytes(4, "big") + mac, "big")
    characters = (4 + _CODE_MAC_BYTES) * 8 // 5
    text = "".join(_CROCKFORD[(bits >> (5 * i)) & 31] for i in reversed(range(characters)))
    return "-".join(text[i : i + _CODE_GROUP_LENGTH] for i in range(0, len(text), _CODE_GROUP_LENGTH))
