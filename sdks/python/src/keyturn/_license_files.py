"""Offline verification of license files (docs/guides/offline.md, "The file format"): the same
checks, in the same order, with the same error codes as the JavaScript client's
``verifyLicenseFile``: armour, clear header, Ed25519 signature by the product key, product,
lifetime, then the payload, decrypted with AES-256-GCM when the file is encrypted."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Mapping, Optional, Sequence

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from ._errors import LicenseFileError
from ._keys import PublicKeys, key_list
from ._time import Instant, epoch_seconds, tolerance_seconds

LICENSE_FILE_FORMAT = "keyturn-license-file/1"
LICENSE_FILE_BEGIN = "-----BEGIN KEYTURN LICENSE FILE-----"
LICENSE_FILE_END = "-----END KEYTURN LICENSE FILE-----"
#: Longer files are refused unparsed.
MAX_LICENSE_FILE_LENGTH = 64 * 1024
_KDF_INFO = b"keyturn-license-file/1 aes-256-gcm"
_MIN_PBKDF2_ITERATIONS = 100_000
_MAX_PBKDF2_ITERATIONS = 10_000_000


@dataclass(frozen=True)
class LicenseFileResult:
    """What a valid file says (the JavaScript client's result, in snake_case)."""

    license_id: str
    product_id: str
    #: When the file expires (ISO 8601); None: never.
    expires_at: Optional[str]
    #: When the file was issued (ISO 8601).
    issued_at: str
    #: What the file says of the license: id, status, expirationDate, policy, entitlements,
    #: maxActivations, maxUses, uses (and metadata when the policy opts in), as in the file.
    license: Mapping[str, Any]
    entitlements: Sequence[str]
    #: The signing key's id.
    key_id: str
    encrypted: bool
    #: Always empty: license files carry no custom payload (kept for the token result's shape).
    custom_fields: Mapping[str, Any] = field(default_factory=dict)
    #: The machine the file is bound to, when it is.
    fingerprint: Optional[str] = None
    activation_id: Optional[str] = None
    #: A file from offline activation: the secret that keys this machine's deactivation codes
    #: (:func:`create_deactivation_code`). Keep it with the file; never show it.
    deactivation_secret: Optional[str] = None
    #: When the application must next validate online (ISO 8601); None: no check-in required.
    check_in_by: Optional[str] = None
    #: Seconds of grace after ``check_in_by`` the license's policy allows; None when it sets none.
    grace_period: Optional[int] = None


_base64url = re.compile(r"^[A-Za-z0-9_-]+$")
_iso_time = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$")
_keyturn_key = re.compile(r"^[0-9A-HJKMNP-TV-Z]{25}$")
_whitespace = re.compile(r"\s+")


#: JavaScript's ``\s`` (Python's differs: it adds U+001C to U+001F and U+0085, and lacks U+FEFF), and the dash.
_key_separators = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff-]")


def canonical_license_key(key: str) -> str:
    """A Keyturn-made key as stored: upper case (full Unicode case mapping, as JavaScript's: ß is SS),
    whitespace and dashes removed, O read as 0, I and L as 1, five groups of five. Input not shaped like
    such a key is returned unchanged."""
    characters = _key_separators.sub("", key.upper()).replace("O", "0").replace("I", "1").replace("L", "1")
    if not _keyturn_key.match(characters):
        return key
    return "-".join(characters[i : i + 5] for i in range(0, 25, 5))


def _decode(part: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except ValueError as error:
        raise LicenseFileError("malformed", "A license file part is not base64url.") from error


def _json(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise LicenseFileError("malformed", "A license file part is not JSON.") from error


def _time(value: Any) -> Optional[float]:
    if not isinstance(value, str) or len(value) > 32 or not _iso_time.match(value):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _is_str(value: Any, low: int, high: int) -> bool:
    return isinstance(value, str) and low <= len(value) <= high


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _nullable_int(value: Any) -> bool:
    return value is None or _is_int(value)


def _header_ok(header: Any) -> bool:
    if not isinstance(header, dict):
        return False
    allowed = {"format", "alg", "kid", "productId", "keyFormat", "issued", "expiry", "encryption"}
    if set(header) - allowed or not {"format", "alg", "kid", "productId", "keyFormat", "issued", "expiry"} <= set(header):
        return False
    encryption = header.get("encryption")
    if encryption is not None:
        if not isinstance(encryption, dict) or set(encryption) - {"alg", "kdf", "iterations", "salt", "iv", "machineBound"}:
            return False
        if not (
            encryption.get("alg") == "A256GCM"
            and encryption.get("kdf") in ("HKDF-SHA256", "PBKDF2-SHA256")
            and ("iterations" not in encryption or _is_int(encryption["iterations"]))
            and _is_str(encryption.get("salt"), 22, 22)
            and _is_str(encryption.get("iv"), 16, 16)
            and isinstance(encryption.get("machineBound"), bool)
        ):
            return False
    elif "encryption" in header:
        return False
    return (
        header["format"] == LICENSE_FILE_FORMAT
        and isinstance(header["alg"], str)
        and _is_str(header["kid"], 1, 128)
        and _is_str(header["productId"], 1, 64)
        and header["keyFormat"] in ("keyturn", "custom")
        and _time(header["issued"]) is not None
        and (header["expiry"] is None or _time(header["expiry"]) is not None)
    )


def _payload_ok(payload: Any) -> bool:
    if (
        not isinstance(payload, dict)
        or set(payload) - {"license", "machine", "checkInBy", "gracePeriod"}
        or "license" not in payload
    ):
        return False
    if "checkInBy" in payload and _time(payload["checkInBy"]) is None:
        return False
    if "gracePeriod" in payload and not (_is_int(payload["gracePeriod"]) and payload["gracePeriod"] >= 0):
        return False
    license = payload["license"]
    required = {"id", "status", "expirationDate", "policy", "entitlements", "maxActivations", "maxUses", "uses"}
    if not isinstance(license, dict) or set(license) - (required | {"metadata"}) or not required <= set(license):
        return False
    if not (
        _is_str(license["id"], 1, 64)
        and _is_str(license["status"], 0, 32)
        and (license["expirationDate"] is None or _is_str(license["expirationDate"], 0, 32))
        and (license["policy"] is None or _is_str(license["policy"], 0, 256))
        and isinstance(license["entitlements"], list)
        and all(_is_str(code, 0, 256) for code in license["entitlements"])
        and _nullable_int(license["maxActivations"])
        and _nullable_int(license["maxUses"])
        and _is_int(license["uses"])
        and ("metadata" not in license or isinstance(license["metadata"], dict))
    ):
        return False
    machine = payload.get("machine")
    if machine is None:
        return "machine" not in payload
    return (
        isinstance(machine, dict)
        and not set(machine) - {"activationId", "fingerprint", "secret"}
        and _is_str(machine.get("activationId"), 1, 64)
        and _is_str(machine.get("fingerprint"), 1, 256)
        and ("secret" not in machine or _is_str(machine["secret"], 43, 43))
    )


def _decrypt(
    header: Mapping[str, Any],
    encoded_header: str,
    ciphertext: bytes,
    license_key: Optional[str],
    fingerprint: Optional[str],
) -> bytes:
    encryption = header["encryption"]
    if license_key is None:
        raise LicenseFileError("decryption_failed", "The file is encrypted: give the license key to read it.")
    if encryption["machineBound"] and fingerprint is None:
        raise LicenseFileError(
            "decryption_failed", "The file is encrypted for a machine: give this machine's fingerprint to read it."
        )
    key_text = canonical_license_key(license_key) if header["keyFormat"] == "keyturn" else license_key
    material = (f"{key_text}\n{fingerprint}" if encryption["machineBound"] else key_text).encode("utf-8")
    salt = _decode(encryption["salt"])
    iv = _decode(encryption["iv"])
    if len(salt) != 16 or len(iv) != 12:
        raise LicenseFileError("malformed", "The file encryption needs a 16-byte salt and a 12-byte iv.")
    if encryption["kdf"] == "HKDF-SHA256":
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=_KDF_INFO).derive(material)
    else:
        iterations = encryption.get("iterations")
        if not _is_int(iterations) or not _MIN_PBKDF2_ITERATIONS <= iterations <= _MAX_PBKDF2_ITERATIONS:
            raise LicenseFileError(
                "malformed",
                f"PBKDF2 needs from {_MIN_PBKDF2_ITERATIONS} to {_MAX_PBKDF2_ITERATIONS} iterations.",
            )
        key = PBKDF2HMAC(algorithm=hashes.SHA256(), length=32, salt=salt, iterations=iterations).derive(material)
    try:
        return AESGCM(key).decrypt(iv, ciphertext, encoded_header.encode("ascii"))
    except InvalidTag as error:
        raise LicenseFileError(
            "decryption_failed",
            "The file could not be decrypted: another license key, or (for a machine file) another machine.",
        ) from error


def verify_license_file(
    file: str,
    *,
    public_key: PublicKeys,
    product_id: str,
    license_key: Optional[str] = None,
    fingerprint: Optional[str] = None,
    now: Optional[Instant] = None,
    clock_tolerance_seconds: float = 0,
    require_entitlements: Optional[Sequence[str]] = None,
) -> LicenseFileResult:
    """Verifies a license file offline; raises ``LicenseFileError`` whose ``code`` says why.

    ``license_key`` is needed to read an encrypted file; ``fingerprint`` binds the check to this
    machine. An invalid ``now`` or tolerance raises ValueError before anything is accepted."""
    # The clock options first: an invalid one must never widen what is accepted.
    at = epoch_seconds(now)
    tolerance = tolerance_seconds(clock_tolerance_seconds, "clock_tolerance_seconds")
    if not isinstance(file, str) or len(file) > MAX_LICENSE_FILE_LENGTH:
        raise LicenseFileError("malformed", f"A license file is text of at most {MAX_LICENSE_FILE_LENGTH} characters.")
    text = file.strip()
    if not text.startswith(LICENSE_FILE_BEGIN) or not text.endswith(LICENSE_FILE_END):
        raise LicenseFileError(
            "malformed", f"A license file starts with {LICENSE_FILE_BEGIN} and ends with {LICENSE_FILE_END}."
        )
    body = _whitespace.sub("", text[len(LICENSE_FILE_BEGIN) : len(text) - len(LICENSE_FILE_END)])
    parts = body.split(".")
    if len(parts) != 3 or not all(_base64url.match(part) and len(part) % 4 != 1 for part in parts):
        raise LicenseFileError("malformed", "A license file body is three dot-separated base64url parts.")
    encoded_header, encoded_payload, encoded_signature = parts
    signature = _decode(encoded_signature)
    if len(signature) != 64:
        raise LicenseFileError("malformed", "A license file signature is 64 bytes (Ed25519).")
    header = _json(_decode(encoded_header))
    if not _header_ok(header):
        raise LicenseFileError("malformed", "The file header is not a Keyturn license-file header.")
    if header["alg"] != "EdDSA":
        raise LicenseFileError("unsupported_algorithm", f"Only EdDSA files are accepted, not {header['alg']}.")
    keys = key_list(public_key)
    match = next((key for kid, key in keys if kid == header["kid"]), None)
    if match is None:
        raise LicenseFileError("unknown_key", f"No configured public key has the file's key id ({header['kid']}).")
    try:
        match.verify(signature, f"{encoded_header}.{encoded_payload}".encode("ascii"))
    except InvalidSignature as error:
        raise LicenseFileError("invalid_signature", "The file signature does not verify with the product key.") from error
    if header["productId"] != product_id:
        raise LicenseFileError("product_mismatch", "The file is for another product.")
    issued = _time(header["issued"])
    if issued is not None and issued > at + tolerance:
        raise LicenseFileError("not_yet_valid", "The file is not valid yet; check the clock.")
    expiry = None if header["expiry"] is None else _time(header["expiry"])
    if expiry is not None and expiry <= at - tolerance:
        raise LicenseFileError("expired", "The file has expired.")
    payload_bytes = _decode(encoded_payload)
    clear = (
        payload_bytes
        if "encryption" not in header
        else _decrypt(header, encoded_header, payload_bytes, license_key, fingerprint)
    )
    payload = _json(clear)
    if not _payload_ok(payload):
        raise LicenseFileError("malformed", "The file payload is not a license.")
    license: Dict[str, Any] = payload["license"]
    machine: Optional[Dict[str, Any]] = payload.get("machine")
    if fingerprint is not None and (machine is None or machine["fingerprint"] != fingerprint):
        raise LicenseFileError("fingerprint_mismatch", "The file is bound to another machine, or to none.")
    missing = [code for code in (require_entitlements or []) if code not in license["entitlements"]]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        raise LicenseFileError("entitlements_missing", f"The license does not carry the entitlement{plural} {', '.join(missing)}.")
    return LicenseFileResult(
        license_id=license["id"],
        product_id=header["productId"],
        expires_at=header["expiry"],
        issued_at=header["issued"],
        license=license,
        entitlements=list(license["entitlements"]),
        key_id=header["kid"],
        encrypted="encryption" in header,
        fingerprint=None if machine is None else machine["fingerprint"],
        activation_id=None if machine is None else machine["activationId"],
        deactivation_secret=None if machine is None else machine.get("secret"),
        check_in_by=payload.get("checkInBy"),
        grace_period=payload.get("gracePeriod"),
    )
