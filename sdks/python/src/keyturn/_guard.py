"""The license guard: one call, ``check()``, that says whether the application may run, online when
the server answers and from a stored signed proof when it cannot be reached. The same rules,
states, reasons and result as the JavaScript client's ``createLicenseGuard`` (snake_case here)."""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Optional, Tuple, Union

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ._client import Client, _SignWith
from ._errors import ApiError, KeyturnConnectionError, KeyturnError, LicenseFileError, SignatureError
from ._keys import PublicKeys, key_list
from ._license_files import canonical_license_key, verify_license_file
from ._signed_answers import read_signed_answer, serialize_signed_answer
from ._storage import FileStorage, GuardStorage
from ._time import Instant, epoch_seconds, tolerance_seconds

#: The grace after a missed check-in when the proof carries none (seconds): three days.
DEFAULT_GUARD_GRACE_PERIOD = 3 * 86400
#: How far ``now`` may be behind the latest signed server time before it is ``clock_tampered``.
DEFAULT_GUARD_CLOCK_TOLERANCE_SECONDS = 300
#: The longest ``grace_period`` accepted: ten years.
MAX_GUARD_GRACE_PERIOD = 3650 * 86400
#: The stored record is sealed: AES-256-GCM under a key derived (HKDF-SHA256) from the license key
#: and the fingerprint, so the store reveals nothing (the signed answer carries the license key) to
#: whoever reads it without them, and opens only for this license on this machine.
GUARD_STORE_FORMAT = "keyturn-guard/1"
_STORE_KDF_INFO = b"keyturn-guard/1 aes-256-gcm"
_VALIDATION_REASONS = frozenset(
    ["expired", "revoked", "suspended", "payment_overdue", "not_activated", "entitlements_missing", "usage_exceeded"]
)


@dataclass(frozen=True)
class GuardLicense:
    """The license as the last verified signed proof states it."""

    id: str
    status: str
    #: When the license expires (ISO 8601); None: never.
    expires_at: Optional[str]


@dataclass(frozen=True)
class LicenseGuardResult:
    """What :meth:`LicenseGuard.check` answers.

    ``state`` is ``valid``, ``grace`` or ``invalid``. ``reason``: ``online`` or ``offline`` when
    valid; ``check_in_overdue`` in grace; when invalid, a validation reason from a signed answer
    (``expired``, ``revoked``, ``suspended``, ``payment_overdue``, ``not_activated``,
    ``entitlements_missing``, ``usage_exceeded``), ``license_not_found``, ``request_refused``,
    ``grace_expired``, ``no_proof``, ``clock_tampered``, ``unexpected_error``, or a license-file
    code of the ``license_file`` option."""

    state: str
    reason: str
    #: None when no verified proof stands behind the decision.
    license: Optional[GuardLicense]
    #: The license's entitlement codes; empty when invalid.
    entitlements: Tuple[str, ...]
    #: Until when this state holds without a check-in (never past the license's end); None when invalid.
    valid_until: Optional[datetime]


@dataclass(frozen=True)
class LicenseGuardStateChange:
    """Given to ``on_change`` after a check whose state or reason differs from the previous one."""

    previous: Optional[LicenseGuardResult]
    current: LicenseGuardResult


@dataclass(frozen=True)
class _Proof:
    """What a verified signed answer or license file says, and when the server made it."""

    signed_at: float
    is_valid: bool
    reason: Optional[str]
    license: GuardLicense
    entitlements: Tuple[str, ...]
    check_in_by: Optional[float]
    grace_period: Optional[int]
    #: The proof's own end (a file's expiry); None: none.
    expires_at: Optional[float]


def _is_text(value: Any, low: int, high: int) -> bool:
    return isinstance(value, str) and low <= len(value) <= high


def _iso_seconds(value: Any) -> Optional[float]:
    """An ISO 8601 time with its zone in epoch seconds; None when it is not one."""
    if not _is_text(value, 1, 40):
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo is not None else None


def _whole_seconds(value: Any, maximum: int) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    return float(value).is_integer() and 0 <= value <= maximum


def _utc(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _invalid(reason: str, license: Optional[GuardLicense]) -> LicenseGuardResult:
    return LicenseGuardResult("invalid", reason, license, (), None)


def _result(state: str, reason: str, proof: _Proof, valid_until: float) -> LicenseGuardResult:
    return LicenseGuardResult(state, reason, proof.license, proof.entitlements, _utc(valid_until))


def _license_end(proof: _Proof) -> float:
    """When the license (or the file carrying it) ends; infinity for never."""
    license_end = math.inf if proof.license.expires_at is None else _iso_seconds(proof.license.expires_at)
    return min(math.inf if license_end is None else license_end, math.inf if proof.expires_at is None else proof.expires_at)


class LicenseGuard:
    """Decides whether this copy of the application is licensed, and keeps working offline.

    ``check()`` validates the license online with an answer signed by ``public_key``, judged at
    ``now`` within ``clock_tolerance_seconds``, and keeps that signed answer (valid or not) in
    ``storage``. When the server cannot be reached (a network error, a timeout, a 5xx, 408 or 429,
    or an answer that fails its signature check), it decides from the newest proof it has: the
    stored answer, or the ``license_file`` given. ``valid`` (``offline``) until the proof's
    ``checkInBy`` (the proof's own signed time when it carries none), then ``grace``
    (``check_in_overdue``) for the proof's grace period (its policy's), else ``grace_period``, then
    ``invalid`` (``grace_expired``). Never past the license's expiry (``expired``). A store that is
    missing, unreadable or does not verify counts as absent (``no_proof``); a ``now`` earlier than
    the latest signed server time the guard has seen, by more than the tolerance, is
    ``clock_tampered``. Never fails open: what the guard does not understand is ``invalid``.

    Invalid options raise ValueError or TypeError; so does a check whose ``now`` does not give a
    finite time. ``on_change`` is called after a check whose state or reason differs from the
    previous one (and after the first); an exception it raises is ignored.
    """

    def __init__(
        self,
        *,
        client: Client,
        license_key: str,
        product_id: str,
        public_key: PublicKeys,
        fingerprint: Optional[str] = None,
        storage: Optional[GuardStorage] = None,
        grace_period: Union[int, float] = DEFAULT_GUARD_GRACE_PERIOD,
        clock_tolerance_seconds: float = DEFAULT_GUARD_CLOCK_TOLERANCE_SECONDS,
        license_file: Optional[str] = None,
        now: Optional[Callable[[], Instant]] = None,
        on_change: Optional[Callable[[LicenseGuardStateChange], None]] = None,
        storage_key: Optional[str] = None,
    ) -> None:
        if not isinstance(client, Client):
            raise TypeError("client must be a keyturn.Client")
        if not _is_text(license_key, 1, 256):
            raise ValueError("license_key must be the license key")
        if not _is_text(product_id, 1, 64):
            raise ValueError("product_id must be the product id")
        key_list(public_key)  # TypeError for anything that is not an Ed25519 public key
        if fingerprint is not None and not _is_text(fingerprint, 1, 256):
            raise ValueError("fingerprint must be a non-empty string when given")
        if storage is not None and not all(callable(getattr(storage, name, None)) for name in ("get", "set", "delete")):
            raise TypeError("storage must have get, set and delete")
        if not _whole_seconds(grace_period, MAX_GUARD_GRACE_PERIOD):
            raise ValueError(f"grace_period must be a whole number of seconds from 0 to {MAX_GUARD_GRACE_PERIOD}")
        if license_file is not None and not isinstance(license_file, str):
            raise TypeError("license_file must be the file's text")
        if now is not None and not callable(now):
            raise TypeError("now must be a function returning a datetime or epoch seconds")
        if on_change is not None and not callable(on_change):
            raise TypeError("on_change must be a function")
        if storage_key is not None and not _is_text(storage_key, 1, 256):
            raise ValueError("storage_key must be a non-empty string")
        self._client = client
        self._license_key = license_key
        self._product_id = product_id
        self._public_key = public_key
        self._fingerprint = fingerprint
        self._storage: GuardStorage = storage if storage is not None else FileStorage()
        self._grace_period = int(grace_period)
        self._tolerance = tolerance_seconds(clock_tolerance_seconds, "clock_tolerance_seconds")
        self._license_file = license_file
        self._now: Callable[[], Instant] = now if now is not None else time.time
        self._on_change = on_change
        #: Where the proof is kept in ``storage``.
        self.storage_key = storage_key if storage_key is not None else f"keyturn-guard:{product_id}"
        # The latest signed server time this guard has seen; stored proofs raise it too.
        self._latest_signed = -math.inf
        self._current: Optional[LicenseGuardResult] = None
        self._lock = threading.Lock()

    @property
    def current(self) -> Optional[LicenseGuardResult]:
        """The last check's result; None before the first."""
        return self._current

    def check(self) -> LicenseGuardResult:
        """Validates (online when it can) and answers the state. Checks from several threads run
        one at a time."""
        with self._lock:
            online = self._validate_online(self._clock())
            result = self._from_proofs(self._clock()) if online is None else online
            previous, self._current = self._current, result
        if self._on_change is not None and (
            previous is None or (previous.state, previous.reason) != (result.state, result.reason)
        ):
            try:
                self._on_change(LicenseGuardStateChange(previous=previous, current=result))
            except Exception:  # noqa: BLE001 (a failing listener must not change what the guard answers)
                pass
        return result

    def forget(self) -> None:
        """Deletes the stored proof (e.g. when the user removes the license from this machine)."""
        self._storage.delete(self.storage_key)

    def _clock(self) -> float:
        return epoch_seconds(self._now())  # ValueError for a time that is not finite

    # Online.

    def _validate_online(self, at: float) -> Optional[LicenseGuardResult]:
        """The online answer as a result, or None when the guard must decide from a proof."""
        try:
            kept = self._client._validate_kept(
                self._license_key,
                self._product_id,
                fingerprint=self._fingerprint,
                sign_with=_SignWith(self._public_key, self._now, self._tolerance),
            )
        except KeyturnConnectionError:
            return None
        except ApiError as error:
            if error.status >= 500 or error.status in (408, 429):
                return None
            if error.status == 404 and error.code == "license_not_found":
                self._forget()
                return _invalid("license_not_found", None)
            return _invalid("request_refused", None)
        except SignatureError as error:
            # Verified, but signed later than this clock allows: the clock is behind the server's.
            if error.code == "stale" and error.signed_at is not None:
                self._latest_signed = max(self._latest_signed, error.signed_at)
                if error.signed_at > at + self._tolerance:
                    return _invalid("clock_tampered", None)
            # Not our server's answer for this request (a captive portal, a proxy, an attacker):
            # what an attacker gets by answering is what they get by cutting the line.
            return None
        except KeyturnError:
            return _invalid("unexpected_error", None)
        answer = serialize_signed_answer(kept)
        proof = self._read_answer(answer)
        if proof is None:
            return _invalid("unexpected_error", None)  # a checked answer that does not read back
        # Kept whether valid or not: a signed "revoked" must also win offline over an older "valid".
        self._keep(answer, proof.is_valid)
        self._latest_signed = max(self._latest_signed, proof.signed_at)
        if not proof.is_valid:
            return _invalid(proof.reason or "unexpected_error", proof.license)
        deadline = proof.check_in_by if proof.check_in_by is not None else proof.signed_at
        return _result("valid", "online", proof, min(deadline, _license_end(proof)))

    # Offline.

    def _from_proofs(self, at: float) -> LicenseGuardResult:
        stored = self._read_stored()
        file = self._read_file(at)
        candidates = [proof for proof in (stored, file) if isinstance(proof, _Proof)]
        if not candidates:
            return _invalid(file if isinstance(file, str) else "no_proof", None)
        proof = max(candidates, key=lambda candidate: candidate.signed_at)
        self._latest_signed = max(self._latest_signed, proof.signed_at)
        if self._latest_signed > at + self._tolerance:
            return _invalid("clock_tampered", proof.license)
        if not proof.is_valid:
            return _invalid(proof.reason or "unexpected_error", proof.license)
        end = _license_end(proof)
        if end <= at:
            return _invalid("expired", proof.license)
        deadline = proof.check_in_by if proof.check_in_by is not None else proof.signed_at
        grace = proof.grace_period if proof.grace_period is not None else self._grace_period
        if at < deadline:
            return _result("valid", "offline", proof, min(deadline, end))
        if at < deadline + grace:
            return _result("grace", "check_in_overdue", proof, min(deadline + grace, end))
        return _invalid("grace_expired", proof.license)

    def _read_stored(self) -> Optional[_Proof]:
        """The stored answer when it opens, verifies and is for this license, product and machine."""
        try:
            text = self._storage.get(self.storage_key)
            if not isinstance(text, str):
                return None
            record = json.loads(self._open(text).decode("utf-8"))
        except Exception:  # noqa: BLE001 (whatever is in the store, or wrong with it, counts as absent)
            return None
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("answer"), str)
            or record.get("fingerprint") != self._fingerprint
        ):
            return None
        return self._read_answer(record["answer"])

    def _read_answer(self, text: str) -> Optional[_Proof]:
        """A kept validation answer verified again; None for anything that is not ours for this license."""
        try:
            answer, body, signed_at = read_signed_answer(text, self._public_key)
        except SignatureError:
            return None
        if answer.status != 200 or answer.method != "POST" or not answer.path.endswith("/licenses/validate"):
            return None
        return self._to_proof(body, signed_at)

    def _to_proof(self, body: Any, signed_at: float) -> Optional[_Proof]:
        license = body.get("license") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(license, dict):
            return None
        timestamp = _iso_seconds(body.get("timestamp"))
        check_in_by = _iso_seconds(body.get("checkInBy")) if "checkInBy" in body else None
        entitlements = license.get("entitlements")
        expiration = license.get("expirationDate")
        key = license.get("key")
        if (
            not isinstance(body.get("isValid"), bool)
            or not isinstance(license.get("id"), str)
            or not isinstance(key, str)
            or not isinstance(license.get("status"), str)
            or license.get("productId") != self._product_id
            or not (key == self._license_key or key == canonical_license_key(self._license_key))
            or not (expiration is None or isinstance(expiration, str))
            or not isinstance(entitlements, list)
            or not all(isinstance(code, str) for code in entitlements)
            or timestamp is None
            or ("checkInBy" in body and check_in_by is None)
            or ("gracePeriod" in body and not _whole_seconds(body["gracePeriod"], MAX_GUARD_GRACE_PERIOD))
        ):
            return None
        reason = body.get("reason")
        known_reason = reason if isinstance(reason, str) and reason in _VALIDATION_REASONS else None
        if not body["isValid"] and known_reason is None:
            return None
        return _Proof(
            signed_at=max(signed_at, timestamp),
            is_valid=body["isValid"],
            reason=known_reason,
            license=GuardLicense(id=license["id"], status=license["status"], expires_at=expiration),
            entitlements=tuple(entitlements),
            check_in_by=check_in_by,
            grace_period=None if "gracePeriod" not in body else int(body["gracePeriod"]),
            expires_at=None,
        )

    def _read_file(self, at: float) -> Union[_Proof, str, None]:
        """The ``license_file`` option verified at ``at``: a proof, its error code, or None without one."""
        if self._license_file is None:
            return None
        try:
            file = verify_license_file(
                self._license_file,
                public_key=self._public_key,
                product_id=self._product_id,
                license_key=self._license_key,
                fingerprint=self._fingerprint,
                now=at,
                clock_tolerance_seconds=self._tolerance,
            )
        except LicenseFileError as error:
            # Issued after this clock: the clock was wound back past the file's making.
            return "clock_tampered" if error.code == "not_yet_valid" else error.code
        status = str(file.license.get("status", ""))
        expiration = file.license.get("expirationDate")
        return _Proof(
            signed_at=_iso_seconds(file.issued_at) or 0.0,
            is_valid=status == "active",
            reason=None if status == "active" else ("revoked" if status == "revoked" else "expired"),
            license=GuardLicense(
                id=file.license_id, status=status, expires_at=expiration if isinstance(expiration, str) else None
            ),
            entitlements=tuple(file.entitlements),
            check_in_by=None if file.check_in_by is None else _iso_seconds(file.check_in_by),
            grace_period=file.grace_period,
            expires_at=None if file.expires_at is None else _iso_seconds(file.expires_at),
        )

    # The store.

    def _keep(self, answer: str, is_valid: bool) -> None:
        record = json.dumps({"answer": answer, "fingerprint": self._fingerprint}, separators=(",", ":"))
        try:
            self._storage.set(self.storage_key, self._seal(record.encode("utf-8")))
        except Exception:  # noqa: BLE001 (a store that cannot be written leaves the answer in hand)
            if not is_valid:
                self._forget()  # an older "valid" must not outlive a signed "invalid" we could not store

    def _forget(self) -> None:
        try:
            self._storage.delete(self.storage_key)
        except Exception:  # noqa: BLE001 (the answer in hand is invalid either way)
            pass

    def _store_key(self, salt: bytes) -> bytes:
        material = f"{self._license_key}\n{self._fingerprint or ''}".encode("utf-8")
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=_STORE_KDF_INFO).derive(material)

    def _seal(self, clear: bytes) -> str:
        salt, iv = os.urandom(16), os.urandom(12)
        sealed = AESGCM(self._store_key(salt)).encrypt(iv, clear, GUARD_STORE_FORMAT.encode("ascii"))
        return ".".join([GUARD_STORE_FORMAT] + [base64.b64encode(part).decode("ascii") for part in (salt, iv, sealed)])

    def _open(self, text: str) -> bytes:
        """The record's clear bytes; ValueError when it is not one sealed with this key."""
        parts = text.strip().split(".")
        if len(parts) != 4 or parts[0] != GUARD_STORE_FORMAT:
            raise ValueError("not a guard store")
        try:
            salt, iv, sealed = (base64.b64decode(part, validate=True) for part in parts[1:])
        except binascii.Error as error:
            raise ValueError("not a guard store") from error
        if len(salt) != 16 or len(iv) != 12:
            raise ValueError("not a guard store")
        try:
            return AESGCM(self._store_key(salt)).decrypt(iv, sealed, GUARD_STORE_FORMAT.encode("ascii"))
        except InvalidTag as error:
            raise ValueError("the store was sealed for another license or machine, or altered") from error
