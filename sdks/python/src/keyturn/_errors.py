"""The exceptions of the Keyturn SDK: every one carries a ``code`` to switch on."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence


class KeyturnError(Exception):
    """The base of every exception this package raises."""

    code: str

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ApiError(KeyturnError):
    """The API refused a request: the RFC 9457 problem's fields (``code`` from Keyturn's error catalogue)."""

    def __init__(self, problem: Mapping[str, Any], retry_after: Optional[float] = None) -> None:
        super().__init__(str(problem.get("code", "internal_error")), str(problem.get("detail", "")))
        self.status: int = int(problem.get("status", 0))
        self.detail: str = str(problem.get("detail", ""))
        request_id = problem.get("requestId")
        self.request_id: Optional[str] = request_id if isinstance(request_id, str) else None
        errors = problem.get("errors")
        self.errors: Sequence[Mapping[str, Any]] = errors if isinstance(errors, list) else []
        self.problem: Mapping[str, Any] = problem
        #: The answer's ``Retry-After`` in seconds, when it had one.
        self.retry_after: Optional[float] = retry_after


class KeyturnConnectionError(KeyturnError):
    """The server could not be reached in time, or did not answer with Keyturn's JSON."""

    def __init__(self, message: str) -> None:
        super().__init__("connection_failed", message)


class TokenError(KeyturnError):
    """An offline license-token check failed: the token is not to be trusted.

    ``code`` is one of ``malformed``, ``invalid_signature``, ``expired``, ``not_yet_valid``,
    ``product_mismatch``, ``unsupported_algorithm``, ``fingerprint_mismatch``, ``entitlements_missing``.
    """


class LicenseFileError(KeyturnError):
    """An offline license-file check failed: the file is not to be trusted, or cannot be read.

    ``code`` is one of the token codes (``malformed``, ``invalid_signature``, ``expired``,
    ``not_yet_valid``, ``product_mismatch``, ``unsupported_algorithm``, ``fingerprint_mismatch``,
    ``entitlements_missing``) or ``unknown_key`` (no configured key has the file's key id) or
    ``decryption_failed`` (another license key or machine, or none given for an encrypted file).
    """


class SignatureError(KeyturnError):
    """A signed answer was missing, altered, replayed, stale or signed by another key.

    ``code`` is one of ``unsigned``, ``malformed``, ``unknown_key``, ``invalid_signature``,
    ``digest_mismatch``, ``nonce_mismatch``, ``stale``.
    """

    def __init__(self, code: str, message: str, signed_at: Optional[float] = None) -> None:
        super().__init__(code, message)
        #: For ``stale``: when the server signed the answer (epoch seconds), its signature otherwise verified.
        self.signed_at = signed_at


class WebhookError(KeyturnError):
    """A webhook request is not a genuine, fresh Keyturn delivery.

    ``code`` is one of ``malformed``, ``stale``, ``invalid_signature``, ``not_an_event``.
    """
