"""Checks a signed answer of the application-facing routes, as the JavaScript client does: the
RFC 9421 signature by one of the product's keys over ``@status``, ``content-digest``, ``date`` and
the request's ``@method`` and ``@path``; the RFC 9530 digest of the body; the echoed nonce; and
``created`` and ``Date`` within a tolerance."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Mapping, Optional, Tuple

from cryptography.exceptions import InvalidSignature

from ._errors import SignatureError
from ._keys import PublicKeys, key_list
from ._time import Instant, epoch_seconds

SIGNATURE_LABEL = "keyturn"
SIGN_ALGORITHM = "ed25519"
#: The covered components, in order: the answer's status, digest and date, the request's method and path.
ANSWER_COVERED_COMPONENTS = '("@status" "content-digest" "date" "@method";req "@path";req)'
DEFAULT_TOLERANCE_SECONDS = 300

_input_pattern = re.compile(
    f"^{SIGNATURE_LABEL}=({re.escape(ANSWER_COVERED_COMPONENTS)};created=(\\d{{1,12}});"
    f'keyid="([A-Za-z0-9_-]{{1,128}})";alg="{SIGN_ALGORITHM}")$'
)
_signature_pattern = re.compile(f"^{SIGNATURE_LABEL}=:([A-Za-z0-9+/]+={{0,2}}):$")
_digest_pattern = re.compile(r"(?:^|,\s*)sha-256=:([A-Za-z0-9+/]+={0,2}):")


def new_nonce() -> str:
    """A fresh random nonce: 128 bits, hex."""
    return secrets.token_hex(16)


def answer_signature_base(
    *, status: int, content_digest: str, date: str, method: str, path: str, signature_params: str
) -> str:
    """The RFC 9421 signature base: one line per covered component, then ``@signature-params``."""
    return "\n".join(
        [
            f'"@status": {status}',
            f'"content-digest": {content_digest.strip()}',
            f'"date": {date.strip()}',
            f'"@method";req: {method}',
            f'"@path";req: {path}',
            f'"@signature-params": {signature_params}',
        ]
    )


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value.strip()
    return None


@dataclass(frozen=True)
class SignedAnswer:
    """A signed answer as received, kept so it can be checked again later (the license guard's
    stored proof): the request's method, path and nonce, the answer's status, its four signature
    headers and its body."""

    status: int
    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    nonce: str


def _check_signature(
    *,
    status: int,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes,
    public_key: PublicKeys,
    nonce: str,
) -> Tuple[int, str]:
    """Everything but the freshness; returns the signed ``created`` (epoch seconds) and ``Date``."""
    signature_input = _header(headers, "signature-input")
    signature = _header(headers, "signature")
    digest = _header(headers, "content-digest")
    date = _header(headers, "date")
    if signature_input is None or signature is None or digest is None or date is None:
        raise SignatureError(
            "unsigned",
            "The answer carries no signature (Signature, Signature-Input, Content-Digest and Date are required).",
        )
    parsed_input = _input_pattern.match(signature_input)
    parsed_signature = _signature_pattern.match(signature)
    sent_digest = _digest_pattern.search(digest)
    if parsed_input is None or parsed_signature is None or sent_digest is None:
        raise SignatureError("malformed", "The signature headers are not in the form Keyturn signs.")
    signature_params, created_text, key_id = parsed_input.groups()
    key = next((key for kid, key in key_list(public_key) if kid == key_id), None)
    if key is None:
        raise SignatureError("unknown_key", f"No configured public key has the answer's key id ({key_id}).")
    base = answer_signature_base(
        status=status,
        content_digest=digest,
        date=date,
        method=method,
        path=path,
        signature_params=signature_params,
    )
    try:
        key.verify(base64.b64decode(parsed_signature.group(1)), base.encode("utf-8"))
    except (InvalidSignature, binascii.Error) as error:
        raise SignatureError("invalid_signature", "The answer's signature does not verify.") from error
    if base64.b64encode(hashlib.sha256(body).digest()).decode("ascii") != sent_digest.group(1):
        raise SignatureError("digest_mismatch", "The answer's body does not match its signed digest.")
    try:
        parsed: Any = json.loads(body.decode("utf-8", errors="replace"))
    except ValueError:
        parsed = None
    echoed = parsed.get("nonce") if isinstance(parsed, dict) else None
    if echoed != nonce:
        raise SignatureError("nonce_mismatch", "The answer is not for this request (another nonce).")
    return int(created_text), date


def verify_signed_answer(
    *,
    status: int,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: bytes,
    public_key: PublicKeys,
    nonce: str,
    now: Optional[Instant] = None,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
) -> None:
    """Returns when the answer is signed for this request by one of the keys; raises
    :class:`keyturn.SignatureError` otherwise. ``path`` is the request's path without the query."""
    created, date = _check_signature(
        status=status, method=method, path=path, headers=headers, body=body, public_key=public_key, nonce=nonce
    )
    current = epoch_seconds(now)
    try:
        dated: Optional[float] = parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError):
        dated = None
    if dated is None or abs(current - created) > tolerance_seconds or abs(current - dated) > tolerance_seconds:
        raise SignatureError(
            "stale",
            f"The answer was signed at {created} (epoch seconds), more than {tolerance_seconds} s from now.",
            signed_at=None if dated is None else max(float(created), dated),
        )


def verify_kept_answer(answer: SignedAnswer, public_key: PublicKeys) -> float:
    """Checks a kept answer again, whatever its age; returns when the server signed it (epoch
    seconds: the later of the signature's ``created`` and the signed ``Date``). Raises
    :class:`keyturn.SignatureError` as :func:`verify_signed_answer` does."""
    created, date = _check_signature(
        status=answer.status,
        method=answer.method,
        path=answer.path,
        headers=answer.headers,
        body=answer.body,
        public_key=public_key,
        nonce=answer.nonce,
    )
    try:
        dated = parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError) as error:
        raise SignatureError("malformed", "The signed Date header is not a date.") from error
    return max(float(created), dated)


#: The headers a kept answer keeps: those its signature covers or needs.
KEPT_HEADERS = ("signature-input", "signature", "content-digest", "date")


def serialize_signed_answer(answer: SignedAnswer) -> str:
    """A signed answer as JSON text (the JavaScript client's form): status, method, path, nonce,
    the four signature headers and the body as text. :func:`read_signed_answer` takes it back."""
    headers = {name: _header(answer.headers, name) or "" for name in KEPT_HEADERS}
    return json.dumps(
        {
            "status": answer.status,
            "method": answer.method,
            "path": answer.path,
            "nonce": answer.nonce,
            "headers": headers,
            "body": answer.body.decode("utf-8", errors="replace"),
        },
        separators=(",", ":"),
    )


def read_signed_answer(text: str, public_key: PublicKeys) -> Tuple[SignedAnswer, Any, float]:
    """A serialised answer verified again (not its age): the answer, its parsed body and when it
    was signed. Raises :class:`keyturn.SignatureError` (``malformed`` for text that is not a kept answer)."""
    malformed = SignatureError("malformed", "The kept answer is not one this client wrote.")
    try:
        record = json.loads(text)
    except ValueError as error:
        raise malformed from error
    headers = record.get("headers") if isinstance(record, dict) else None
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("status"), int)
        or not all(isinstance(record.get(name), str) for name in ("method", "path", "nonce", "body"))
        or not isinstance(headers, dict)
        or not all(isinstance(headers.get(name), str) for name in KEPT_HEADERS)
    ):
        raise malformed
    try:
        parsed = json.loads(record["body"])
    except ValueError as error:
        raise malformed from error
    answer = SignedAnswer(
        status=record["status"],
        method=record["method"],
        path=record["path"],
        headers={name: headers[name] for name in KEPT_HEADERS},
        body=record["body"].encode("utf-8"),
        nonce=record["nonce"],
    )
    return answer, parsed, verify_kept_answer(answer, public_key)
