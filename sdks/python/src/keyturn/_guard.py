"""The license guard: one call, ``check()``, that says whether the application may run, online when
the server answers and from a stored signed proof when it cannot be reached. The same states,
reasons and result shape as the JavaScript client's ``createLicenseGuard`` (snake_case here)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ._client import Client
from ._errors import ApiError, KeyturnConnectionError, LicenseFileError, SignatureError
from ._keys import PublicKeys, key_list
from ._license_files import LicenseFileResult, verify_license_file
from ._signed_answers import SignedAnswer, verify_kept_answer
from ._storage import FileStorage, GuardStorage
from ._time import Instant, epoch_seconds, tolerance_seconds

#: The stored proof's format: the last valid signed validation answer and a license file for this
#: machine, encrypted with AES-256-GCM under a key derived (HKDF-SHA256) from the license key and
#: the fingerprint, so the store reveals nothing (not even the license key the answer carries)
#: to whoever reads it without them.
GUARD_STORE_FORMAT = "keyturn-guard/1"
_STORE_KDF_INFO = b"keyturn-guard/1 aes-256-gcm"
#: How far the clock may be behind the latest signed server time before it counts as wound back.
DEFAULT_GUARD_CLOCK_TOLERANCE_SECONDS = 300
#: The longest grace period the option accepts: ten years.
MAX_GRACE_PERIOD_SECONDS = 10 * 366 * 86400
_VALIDATE_PATH_SUFFIX = "/licenses/validate"
#: A stored file failing with these codes was tampered with or is not ours: the store counts as absent.
_NOT_A_PROOF = {"malformed", "invalid_signature", "unknown_key", "decryption_failed", "product_mismatch", "unsupported_algorithm"}


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
    valid; ``check_in_overdue`` in grace; when invalid, the server's validation reason (``expired``,
    ``revoked``, ``suspended``, ``not_activated`` …), ``grace_expired``, ``no_proof``,
    ``clock_tampered``, a license-file code of the stored proof (``expired``,
    ``fingerprint_mismatch`` …), or the API's error code when the server refused the check
    (``license_not_found``, ``unauthenticated``, ``rate_limited`` …)."""

    state: str
    reason: str
    license: Optional[GuardLicense]
    entitlements: Tuple[str, ...]
    #: Until when this state holds without a check-in: ``checkInBy`` when valid, ``checkInBy`` plus
    #: the grace period in grace; None when invalid or when the license needs no check-in.
    valid_until: Optional[datetime]


@dataclass(frozen=True)
class LicenseGuardStateChange:
    """Given to ``on_change`` when a check's state or reason differs from the previous one."""

    previous: Optional[LicenseGuardResult]
    current: LicenseGuardResult


@dataclass(frozen=True)
class _Proof:
    answer: Dict[str, Any]
    signed: SignedAnswer
    signed_at: int
    license_file: str


def _is_text(value: Any, low: int, high: int) -> bool:
    return isinstance(value, str) and low <= len(value) <= high


def _iso_seconds(value: Any) -> Optional[float]:
    """An ISO 8601 time with a zone in epoch seconds; ValueError when it is not one."""
    if value is None:
        return None
    if not _is_text(value, 1, 40):
        raise ValueError("not a time")
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise ValueError("a time without a zone")
    return parsed.timestamp()


def _utc(seconds: Optional[float]) -> Optional[datetime]:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=timezone.utc)


def _license_of(answer: Dict[str, Any]) -> Tuple[Optional[GuardLicense], Tuple[str, ...]]:
    license = answer.get("license")
    if not isinstance(license, dict) or not _is_text(license.get("id"), 1, 64):
        return None, ()
    expires = license.get("expirationDate")
    status = license.get("status")
    codes = license.get("entitlements")
    entitlements = tuple(code for code in codes if isinstance(code, str)) if isinstance(codes, list) else ()
    return (
        GuardLicense(
            id=str(license["id"]),
            status=status if isinstance(status, str) else "",
            expires_at=expires if isinstance(expires, str) else None,
        ),
        entitlements,
    )


def _invalid(reason: str, answer: Optional[Dict[str, Any]] = None) -> LicenseGuardResult:
    license, entitlements = _license_of(answer) if answer is not None else (None, ())
    return LicenseGuardResult("invalid", reason, license, entitlements, None)


class LicenseGuard:
    """Decides whether this copy of the application is licensed, and keeps working offline.

    ``check()`` validates the license online with a signed answer. When it is valid, the guard
    keeps that signed answer and a license file for this machine (encrypted with the license key
    and the fingerprint) in ``storage``. When the server cannot be reached (a network error, a
    timeout or a 5xx; nothing else), it decides from that stored proof: ``valid`` (``offline``)
    until the answer's ``checkInBy``, then ``grace`` (``check_in_overdue``) until ``checkInBy`` plus
    the grace period (the policy's, when the answer carries one, else ``grace_period``), then
    ``invalid`` (``grace_expired``). A store that is missing, unreadable or does not verify counts
    as absent (``no_proof``); a clock earlier than the latest signed server time the guard has seen,
    by more than ``clock_tolerance_seconds``, is ``clock_tampered``. Never fails open: what the
    guard does not understand is ``invalid``.

    ``client`` must verify signed answers (give it ``public_key``). ``now`` is a function returning
    a datetime or epoch seconds (default: the system clock); a check whose ``now`` is not a finite
    time raises ValueError. Invalid options raise ValueError or TypeError at construction.
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
        grace_period: float = 0,
        clock_tolerance_seconds: float = DEFAULT_GUARD_CLOCK_TOLERANCE_SECONDS,
        entitlements: Optional[Sequence[str]] = None,
        now: Optional[Callable[[], Instant]] = None,
        on_change: Optional[Callable[[LicenseGuardStateChange], None]] = None,
    ) -> None:
        if not isinstance(client, Client):
            raise TypeError("client must be a keyturn.Client")
        if client._public_key is None:
            raise ValueError("the client must verify signed answers: create it with public_key")
        if not _is_text(license_key, 1, 256) or license_key.strip() == "":
            raise ValueError("license_key must be a license key (1 to 256 characters)")
        if not _is_text(product_id, 1, 64):
            raise ValueError("product_id must be a product id")
        key_list(public_key)  # raises TypeError for anything that is not an Ed25519 key
        if fingerprint is not None and not _is_text(fingerprint, 1, 256):
            raise ValueError("fingerprint must be 1 to 256 characters, or None")
        if storage is not None and not all(callable(getattr(storage, name, None)) for name in ("get", "set", "delete")):
            raise TypeError("storage must have get, set and delete methods")
        if (
            isinstance(grace_period, bool)
            or not isinstance(grace_period, (int, float))
            or not math.isfinite(grace_period)
            or not 0 <= grace_period <= MAX_GRACE_PERIOD_SECONDS
        ):
            raise ValueError(f"grace_period must be a number of seconds from 0 to {MAX_GRACE_PERIOD_SECONDS}")
        if entitlements is not None and (
            isinstance(entitlements, str) or not all(_is_text(code, 1, 256) for code in entitlements)
        ):
            raise ValueError("entitlements must be a list of entitlement codes, or None")
        if now is not None and not callable(now):
            raise TypeError("now must be a function returning a datetime or epoch seconds")
        if on_change is not None and not callable(on_change):
            raise TypeError("on_change must be a function")
        self._client = client
        self._license_key = license_key
        self._product_id = product_id
        self._public_key = public_key
        self._fingerprint = fingerprint
        self._storage: GuardStorage = storage if storage is not None else FileStorage()
        self._grace_period = float(grace_period)
        self._tolerance = tolerance_seconds(clock_tolerance_seconds, "clock_tolerance_seconds")
        self._entitlements = None if entitlements is None else list(entitlements)
        self._now: Callable[[], Instant] = now if now is not None else time.time
        self._on_change = on_change
        self._latest_signed_at = 0.0
        self._last: Optional[LicenseGuardResult] = None
        digest = hashlib.sha256(f"{product_id}\n{license_key}\n{fingerprint or ''}".encode("utf-8")).hexdigest()
        #: The storage key of this license's proof on this machine (no secret in the name).
        self.storage_key = f"keyturn-guard-{digest[:40]}"

    @property
    def last_result(self) -> Optional[LicenseGuardResult]:
        """The latest check's result, None before the first."""
        return self._last

    def check(self) -> LicenseGuardResult:
        """Checks now: online when the server answers, else from the stored proof."""
        at = epoch_seconds(self._now())
        result = self._decide(at)
        previous, self._last = self._last, result
        if self._on_change is not None and (
            previous is None or (previous.state, previous.reason) != (result.state, result.reason)
        ):
            self._on_change(LicenseGuardStateChange(previous=previous, current=result))
        return result

    def forget(self) -> None:
        """Deletes the stored proof (e.g. when the user removes the license from this machine)."""
        self._storage.delete(self.storage_key)

    # Online.

    def _decide(self, at: float) -> LicenseGuardResult:
        try:
            answer, signed = self._client._validate_kept(
                self._license_key, self._product_id, fingerprint=self._fingerprint, entitlements=self._entitlements
            )
        except KeyturnConnectionError:
            return self._offline(at)
        except ApiError as error:
            if error.status >= 500:
                return self._offline(at)
            if error.code == "license_not_found":
                self.forget()
            return _invalid(error.code)
        except SignatureError as error:
            # A stale answer means this clock and the server's disagree by minutes.
            return _invalid("clock_tampered" if error.code == "stale" else self._signature_reason(error))
        try:
            signed_at = verify_kept_answer(signed, self._public_key)
        except SignatureError as error:
            return _invalid(self._signature_reason(error))
        self._latest_signed_at = max(self._latest_signed_at, float(signed_at))
        if not self._answer_is_ours(answer):
            return _invalid("malformed")
        if answer.get("isValid") is not True:
            # The server said no: a stored proof must not bring the license back offline.
            self.forget()
            reason = answer.get("reason")
            return _invalid(str(reason) if _is_text(reason, 1, 64) else "invalid", answer)
        try:
            check_in_by = _iso_seconds(answer.get("checkInBy"))
        except ValueError:
            return _invalid("malformed", answer)
        self._keep(at, answer, signed, signed_at)
        license, entitlements = _license_of(answer)
        return LicenseGuardResult("valid", "online", license, entitlements, _utc(check_in_by))

    @staticmethod
    def _signature_reason(error: SignatureError) -> str:
        return "unknown_key" if error.code == "unknown_key" else "invalid_signature"

    def _answer_is_ours(self, answer: Dict[str, Any]) -> bool:
        license = answer.get("license")
        return (
            isinstance(answer.get("isValid"), bool)
            and isinstance(license, dict)
            and _is_text(license.get("id"), 1, 64)
            and license.get("productId") == self._product_id
        )

    def _keep(self, at: float, answer: Dict[str, Any], signed: SignedAnswer, signed_at: int) -> None:
        """Stores the new answer with a license file for this machine: the stored one while it is
        for this license and in the first half of its life, else a fresh one. When no file can be
        had, the store stays as it was."""
        stored = self._load()
        license_file = None
        if stored is not None:
            checked = self._verify_file(stored.license_file, at)
            if (
                isinstance(checked, LicenseFileResult)
                and checked.license_id == answer["license"]["id"]
                and not self._past_half_life(checked, at)
            ):
                license_file = stored.license_file
        if license_file is None:
            try:
                made = self._client.create_license_file(
                    self._license_key, self._product_id, fingerprint=self._fingerprint, encrypt=True
                )
            except (ApiError, KeyturnConnectionError):
                return
            text = made.get("licenseFile")
            if not isinstance(text, str) or not isinstance(self._verify_file(text, at), LicenseFileResult):
                return
            license_file = text
        record = {
            "answer": {
                "status": signed.status,
                "method": signed.method,
                "path": signed.path,
                "headers": dict(signed.headers),
                "body": base64.b64encode(signed.body).decode("ascii"),
                "nonce": signed.nonce,
            },
            "licenseFile": license_file,
        }
        self._storage.set(self.storage_key, self._seal(json.dumps(record, separators=(",", ":")).encode("utf-8")))

    def _store_key(self, salt: bytes) -> bytes:
        material = f"{self._license_key}\n{self._fingerprint or ''}".encode("utf-8")
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=_STORE_KDF_INFO).derive(material)

    def _seal(self, clear: bytes) -> str:
        salt, iv = os.urandom(16), os.urandom(12)
        sealed = AESGCM(self._store_key(salt)).encrypt(iv, clear, GUARD_STORE_FORMAT.encode("ascii"))
        parts = [GUARD_STORE_FORMAT] + [base64.b64encode(part).decode("ascii") for part in (salt, iv, sealed)]
        return ".".join(parts)

    def _open(self, text: str) -> bytes:
        """The record's clear bytes; ValueError when it is not one we sealed with this key."""
        parts = text.strip().split(".")
        if len(parts) != 4 or parts[0] != GUARD_STORE_FORMAT:
            raise ValueError("not a guard store")
        salt, iv, sealed = (base64.b64decode(part, validate=True) for part in parts[1:])
        if len(salt) != 16 or len(iv) != 12:
            raise ValueError("not a guard store")
        try:
            return AESGCM(self._store_key(salt)).decrypt(iv, sealed, GUARD_STORE_FORMAT.encode("ascii"))
        except InvalidTag as error:
            raise ValueError("the store was sealed with another key, or altered") from error

    @staticmethod
    def _past_half_life(checked: LicenseFileResult, at: float) -> bool:
        if checked.expires_at is None:
            return False
        issued = _iso_seconds(checked.issued_at) or at
        expires = _iso_seconds(checked.expires_at) or at
        return at >= issued + (expires - issued) / 2

    # Offline.

    def _offline(self, at: float) -> LicenseGuardResult:
        proof = self._load()
        if proof is None:
            return _invalid("no_proof")
        if max(self._latest_signed_at, float(proof.signed_at)) > at + self._tolerance:
            return _invalid("clock_tampered", proof.answer)
        checked = self._verify_file(proof.license_file, at)
        if not isinstance(checked, LicenseFileResult):
            return _invalid("no_proof" if checked in _NOT_A_PROOF else checked, proof.answer)
        if checked.license_id != proof.answer["license"]["id"]:
            return _invalid("no_proof")
        try:
            check_in_by = _iso_seconds(proof.answer.get("checkInBy"))
        except ValueError:
            return _invalid("no_proof")
        license, entitlements = _license_of(proof.answer)
        if check_in_by is None or at < check_in_by:
            return LicenseGuardResult("valid", "offline", license, entitlements, _utc(check_in_by))
        policy_grace = proof.answer.get("gracePeriod")
        grace = (
            float(policy_grace)
            if isinstance(policy_grace, int) and not isinstance(policy_grace, bool) and policy_grace >= 0
            else self._grace_period
        )
        if at < check_in_by + grace:
            return LicenseGuardResult("grace", "check_in_overdue", license, entitlements, _utc(check_in_by + grace))
        return _invalid("grace_expired", proof.answer)

    def _verify_file(self, text: str, at: float) -> Any:
        """The file's result, or the code it fails with."""
        try:
            return verify_license_file(
                text,
                public_key=self._public_key,
                product_id=self._product_id,
                license_key=self._license_key,
                fingerprint=self._fingerprint,
                now=at,
                clock_tolerance_seconds=self._tolerance,
                require_entitlements=self._entitlements,
            )
        except LicenseFileError as error:
            return error.code

    def _load(self) -> Optional[_Proof]:
        """The stored proof when it is whole and its answer verifies; None otherwise (never raises
        for what is in the store)."""
        try:
            text = self._storage.get(self.storage_key)
        except (OSError, ValueError):
            return None
        if text is None:
            return None
        try:
            record = json.loads(self._open(text).decode("utf-8"))
            kept = record["answer"]
            headers = kept["headers"]
            if (
                not _is_text(record.get("licenseFile"), 1, 64 * 1024)
                or kept.get("status") != 200
                or kept.get("method") != "POST"
                or not _is_text(kept.get("path"), 1, 512)
                or not str(kept["path"]).endswith(_VALIDATE_PATH_SUFFIX)
                or not _is_text(kept.get("nonce"), 1, 128)
                or not isinstance(headers, dict)
                or not all(_is_text(name, 1, 64) and _is_text(value, 0, 4096) for name, value in headers.items())
                or not _is_text(kept.get("body"), 1, 128 * 1024)
            ):
                return None
            signed = SignedAnswer(
                status=200,
                method="POST",
                path=kept["path"],
                headers=headers,
                body=base64.b64decode(kept["body"], validate=True),
                nonce=kept["nonce"],
            )
            signed_at = verify_kept_answer(signed, self._public_key)
            answer = json.loads(signed.body.decode("utf-8"))
        except (ValueError, TypeError, KeyError, AttributeError, binascii.Error, SignatureError):
            return None
        if not isinstance(answer, dict) or not self._answer_is_ours(answer) or answer.get("isValid") is not True:
            return None
        return _Proof(answer=answer, signed=signed, signed_at=signed_at, license_file=record["licenseFile"])
