"""Offline validation of license tokens: the same checks, in the same order, with the same error
codes as the JavaScript client's ``validateLicenseToken`` (EdDSA only, ``typ``, ``kid``, audience,
issuer, lifetime, claims, then the machine and the entitlements)."""

from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from cryptography.exceptions import InvalidSignature

from ._errors import TokenError
from ._keys import PublicKeys, key_list
from ._time import Instant, epoch_seconds, tolerance_seconds

#: Longer tokens are refused unparsed.
MAX_LICENSE_TOKEN_LENGTH = 16 * 1024
LICENSE_TOKEN_TYPE = "license+jwt"
LICENSE_TOKEN_ISSUER = "keyturn"


@dataclass(frozen=True)
class OfflineValidationResult:
    """What a valid token says (the JavaScript client's result, in snake_case)."""

    license_id: str
    #: When the token expires (ISO 8601).
    expires_at: str
    product_id: str
    custom_fields: Mapping[str, Any]
    #: When the token was issued (ISO 8601).
    issued_at: str
    #: The license's entitlement codes when the token was issued.
    entitlements: Sequence[str] = field(default_factory=list)
    #: The machine the token is bound to, when it is.
    fingerprint: Optional[str] = None
    #: When the application must next validate online (ISO 8601); None: no check-in required.
    check_in_by: Optional[str] = None
    #: Seconds of grace after ``check_in_by`` the license's policy allows; None when it sets none.
    grace_period: Optional[int] = None


_base64url = re.compile(r"^[A-Za-z0-9_-]*$")
_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_unused_bits_mask = {0: 0, 2: 0b1111, 3: 0b11}


def _decode_canonical(part: str) -> Optional[bytes]:
    """Only canonical base64url (no padding, unused bits zero): one spelling per token."""
    mask = _unused_bits_mask.get(len(part) % 4)
    if mask is None or not _base64url.match(part):
        return None
    if mask != 0 and (_alphabet.index(part[-1]) & mask) != 0:
        return None
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_object(data: bytes) -> Optional[Dict[str, Any]]:
    try:
        value = json.loads(data.decode("utf-8", errors="replace"), parse_constant=_reject_constant)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _read_header(encoded: str) -> Dict[str, Any]:
    try:
        data = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError as error:
        raise TokenError("malformed", "The token header is not valid base64url JSON.") from error
    header = _parse_object(data)
    if header is None:
        raise TokenError("malformed", "The token header is not valid base64url JSON.")
    return header


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return _is_number(value) and float(value).is_integer()


_date_time = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$"
)
_days = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


def _is_date_time(value: Any) -> bool:
    """An RFC 3339 date-time, as the JSON Schema ``date-time`` format reads it."""
    if not isinstance(value, str):
        return False
    match = _date_time.match(value)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(group) for group in match.groups()[:6])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not (1 <= month <= 12 and 1 <= day <= (29 if month == 2 and leap else _days[month])):
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    if match.group(7) is not None and (int(match.group(8)) > 23 or int(match.group(9)) > 59):
        return False
    return True


def _is_id(value: Any, prefix: str) -> bool:
    return isinstance(value, str) and value.startswith(prefix) and len(value) <= 64


def _has_license_claims(claims: Mapping[str, Any]) -> bool:
    """The claims' schema: the license's fields and the registered claims, each of its type."""
    optional_ok = (
        ("customFields" not in claims or isinstance(claims["customFields"], dict))
        and ("fingerprint" not in claims or isinstance(claims["fingerprint"], str))
        and (
            "entitlements" not in claims
            or (
                isinstance(claims["entitlements"], list)
                and all(isinstance(code, str) for code in claims["entitlements"])
            )
        )
        and ("nbf" not in claims or _is_integer(claims["nbf"]))
        and ("checkInBy" not in claims or _is_date_time(claims["checkInBy"]))
        and ("gracePeriod" not in claims or (_is_integer(claims["gracePeriod"]) and claims["gracePeriod"] >= 0))
    )
    return (
        optional_ok
        and _is_id(claims.get("licenseId"), "lic_")
        and _is_id(claims.get("productId"), "prd_")
        and _is_date_time(claims.get("expirationDate"))
        and _is_date_time(claims.get("createdAt"))
        and isinstance(claims.get("iss"), str)
        and _is_id(claims.get("sub"), "lic_")
        and _is_id(claims.get("aud"), "prd_")
        and _is_integer(claims.get("iat"))
        and _is_integer(claims.get("exp"))
        and isinstance(claims.get("jti"), str)
    )


def _check_critical(crit: Any) -> None:
    """RFC 7515 ``crit``: no extension is implemented, so a token that requires one is refused."""
    if crit is None:
        return
    if not isinstance(crit, list) or len(crit) == 0 or any(not isinstance(n, str) or n == "" for n in crit):
        raise TokenError("malformed", 'The token header "crit" must be a list of names.')
    raise TokenError("unsupported_algorithm", "The token requires an extension that is not supported.")


def _check_claims(payload: Mapping[str, Any], product_id: str, now: int, tolerance: float) -> None:
    for claim in ("exp", "iat", "sub", "jti"):
        if claim not in payload:
            raise TokenError("malformed", f'The token lacks the "{claim}" claim.')
    if payload.get("iss") != LICENSE_TOKEN_ISSUER:
        raise TokenError("malformed", "The token is not issued by Keyturn.")
    if not isinstance(payload["sub"], str):
        raise TokenError("malformed", 'The token "sub" claim must be a string.')
    aud = payload.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if not any(isinstance(audience, str) and audience == product_id for audience in audiences):
        raise TokenError("product_mismatch", "The token is for another product.")
    if not _is_number(payload["iat"]):
        raise TokenError("malformed", 'The token "iat" claim must be a number.')
    if "nbf" in payload and (not _is_number(payload["nbf"]) or payload["nbf"] > now + tolerance):
        raise TokenError("not_yet_valid", "The token is not valid yet; check the clock.")
    if not _is_number(payload["exp"]):
        raise TokenError("malformed", 'The token "exp" claim must be a number.')
    if payload["exp"] <= now - tolerance:
        raise TokenError("expired", "The token has expired.")


def validate_license_token(
    token: str,
    *,
    public_key: PublicKeys,
    product_id: str,
    fingerprint: Optional[str] = None,
    now: Optional[Instant] = None,
    clock_tolerance_seconds: float = 0,
    require_entitlements: Optional[Sequence[str]] = None,
) -> OfflineValidationResult:
    """Validates a license token offline, with no network.

    Returns what the token says; raises :class:`keyturn.TokenError` whose ``code`` says why it is
    not to be trusted. ``public_key`` is the product's key (PEM or JWK) or several (current and
    retired); ``fingerprint``, when given, must be the machine the token is bound to; ``now``
    (a datetime or epoch seconds) defaults to the system clock.
    """
    # The clock options first: an invalid one must never widen what is accepted.
    current = math.floor(epoch_seconds(now))
    tolerance = tolerance_seconds(clock_tolerance_seconds, "clock_tolerance_seconds")
    if not isinstance(token, str) or len(token) == 0 or len(token) > MAX_LICENSE_TOKEN_LENGTH:
        raise TokenError("malformed", f"A license token is a JWT of at most {MAX_LICENSE_TOKEN_LENGTH} characters.")
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("malformed", "A license token has three dot-separated parts.")
    encoded_header, encoded_payload, encoded_signature = parts
    canonical_header = _decode_canonical(encoded_header)
    header = _read_header(encoded_header) if canonical_header is None else _parse_object(canonical_header)
    if header is None:
        raise TokenError("malformed", "The token header is not valid base64url JSON.")
    # Never let the token choose its algorithm (RFC 8725): none, HS256 and the rest stop here.
    if header.get("alg") != "EdDSA":
        raise TokenError("unsupported_algorithm", f"Only EdDSA tokens are accepted, not {header.get('alg')}.")
    if header.get("typ") != LICENSE_TOKEN_TYPE:
        raise TokenError("malformed", f"The token type must be {LICENSE_TOKEN_TYPE}.")
    _check_critical(header.get("crit"))
    payload_bytes = _decode_canonical(encoded_payload)
    signature = _decode_canonical(encoded_signature)
    if canonical_header is None or payload_bytes is None or signature is None or len(signature) != 64:
        raise TokenError("malformed", "The token is not three canonical base64url parts with an Ed25519 signature.")
    kid = header.get("kid")
    key = next((key for key_id, key in key_list(public_key) if isinstance(kid, str) and key_id == kid), None)
    if key is None:
        raise TokenError("invalid_signature", f"No configured public key has the token's key id ({kid}).")
    try:
        key.verify(signature, f"{encoded_header}.{encoded_payload}".encode("ascii"))
    except InvalidSignature as error:
        raise TokenError("invalid_signature", "The token signature does not verify with the product key.") from error
    claims = _parse_object(payload_bytes)
    if claims is None:
        raise TokenError("malformed", "The token payload is not a JSON object.")
    _check_claims(claims, product_id, current, tolerance)
    if not _has_license_claims(claims) or claims["productId"] != product_id or claims["sub"] != claims["licenseId"]:
        raise TokenError("malformed", "The token does not carry license claims.")
    if fingerprint is not None and claims.get("fingerprint") != fingerprint:
        raise TokenError("fingerprint_mismatch", "The token is bound to another machine, or to none.")
    entitlements: List[str] = claims.get("entitlements", [])
    missing = [code for code in (require_entitlements or []) if code not in entitlements]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise TokenError("entitlements_missing", f"The license does not carry the entitlement{plural} {', '.join(missing)}.")
    return OfflineValidationResult(
        license_id=claims["licenseId"],
        expires_at=claims["expirationDate"],
        product_id=claims["productId"],
        custom_fields=claims.get("customFields", {}),
        issued_at=claims["createdAt"],
        entitlements=entitlements,
        fingerprint=claims.get("fingerprint"),
        check_in_by=claims.get("checkInBy"),
        grace_period=None if claims.get("gracePeriod") is None else int(claims["gracePeriod"]),
    )
