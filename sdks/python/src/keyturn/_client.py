"""The online client: the application-facing calls by license key, with timeouts, retries and
signed answers following the JavaScript client's rules."""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from email.utils import parsedate_to_datetime
from http.client import HTTPException
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence

from ._errors import ApiError, KeyturnConnectionError
from ._keys import PublicKeys
from ._signed_answers import DEFAULT_TOLERANCE_SECONDS, SignedAnswer, new_nonce, verify_signed_answer
from ._time import Instant

DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_RETRIES = 2
USER_AGENT = "keyturn-python/0.1.0"


def _retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        return max(0.0, parsedate_to_datetime(text).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _object(value: Any) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise KeyturnConnectionError("The server did not answer with a JSON object")
    return value


class _SignWith(NamedTuple):
    """How a signed answer is checked: the keys, the clock and the tolerance."""

    public_key: PublicKeys
    now: Callable[[], Instant]
    tolerance_seconds: float


class Client:
    """A Keyturn API client for applications (usually with a ``client`` API key).

    Failures raise :class:`keyturn.ApiError` (the problem's ``code``, ``status``, ``retry_after``)
    or :class:`keyturn.KeyturnConnectionError`. With ``public_key`` (the product's PEM or JWK, or
    several), the application-facing calls send a fresh nonce and accept only an answer signed by
    one of those keys for that request, else :class:`keyturn.SignatureError`.

    Retries follow the JavaScript client: after a network error, a timeout, a 5xx, a 429 or
    ``idempotency_key_in_progress``, of GETs, of repeatable POSTs (validate, heartbeat) and of POSTs
    that carry an ``Idempotency-Key`` (one generated per call unless given); waits are random
    ("full jitter") up to ``retry_base_delay`` doubling each time, or the server's ``Retry-After``
    when it is at most ``retry_max_delay`` (a longer one is not waited for).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_base_delay: float = 0.25,
        retry_max_delay: float = 20.0,
        public_key: Optional[PublicKeys] = None,
        signature_tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
        now: Optional[Callable[[], Instant]] = None,
        sleep: Callable[[float], None] = time.sleep,
        random_source: Callable[[], float] = random.random,
    ) -> None:
        root = base_url.rstrip("/")
        if root.endswith("/api/v0"):
            root = root[: -len("/api/v0")]
        self._api_url = f"{root}/api/v0"
        self._api_key = api_key
        self._timeout = timeout
        self._max_retries = max_retries
        self._retry_base_delay = retry_base_delay
        self._retry_max_delay = retry_max_delay
        self._public_key = public_key
        self._tolerance = signature_tolerance_seconds
        self._now = now if now is not None else time.time
        self._sleep = sleep
        self._random = random_source

    # The application-facing calls (by license key).

    def validate_license(
        self,
        key: str,
        product_id: str,
        *,
        fingerprint: Optional[str] = None,
        entitlements: Optional[Sequence[str]] = None,
    ) -> Dict[str, Any]:
        """``{"isValid", "reason", "timestamp", "license"}``; raises ``license_not_found`` for unknown keys."""
        body: Dict[str, Any] = {"key": key, "productId": product_id}
        if fingerprint is not None:
            body["fingerprint"] = fingerprint
        if entitlements is not None:
            body["entitlements"] = list(entitlements)
        return _object(self._call("POST", "/licenses/validate", body, repeatable=True, signed=True))

    def _validate_kept(
        self,
        key: str,
        product_id: str,
        *,
        fingerprint: Optional[str],
        sign_with: _SignWith,
    ) -> SignedAnswer:
        """:meth:`validate_license` whose answer must be signed by ``sign_with``'s keys, judged at its
        time and tolerance, giving the signed answer as received (for the license guard)."""
        body: Dict[str, Any] = {"key": key, "productId": product_id}
        if fingerprint is not None:
            body["fingerprint"] = fingerprint
        kept: List[SignedAnswer] = []
        self._call("POST", "/licenses/validate", body, repeatable=True, signed=True, keep=kept, sign_with=sign_with)
        if not kept:
            raise KeyturnConnectionError("The validation answer was not checked")  # unreachable: signed with keys
        return kept[-1]

    def activate_license(
        self,
        key: str,
        product_id: str,
        fingerprint: str,
        *,
        name: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> Dict[str, Any]:
        """The activation; raises ``activation_limit_reached`` (409) when every seat is taken."""
        body: Dict[str, Any] = {"key": key, "productId": product_id, "fingerprint": fingerprint}
        if name is not None:
            body["name"] = name
        if metadata is not None:
            body["metadata"] = dict(metadata)
        return _object(self._call("POST", "/licenses/activate", body, signed=True, idempotency_key=idempotency_key))

    def deactivate_license(self, key: str, product_id: str, fingerprint: str) -> None:
        """Frees this machine's seat."""
        self._call("POST", "/licenses/deactivate", {"key": key, "productId": product_id, "fingerprint": fingerprint})

    def heartbeat_license(self, key: str, product_id: str, fingerprint: str) -> Dict[str, Any]:
        """Renews this machine's seat; raises ``activation_not_found`` once a floating seat has lapsed."""
        body = {"key": key, "productId": product_id, "fingerprint": fingerprint}
        return _object(self._call("POST", "/licenses/heartbeat", body, repeatable=True, signed=True))

    def increment_usage(
        self, key: str, product_id: str, increment: int = 1, *, idempotency_key: Optional[str] = None
    ) -> Dict[str, Any]:
        """The license after adding ``increment`` to ``uses``; raises ``usage_limit_reached`` past ``maxUses``."""
        body = {"key": key, "productId": product_id, "increment": increment}
        return _object(self._call("POST", "/licenses/usage", body, signed=True, idempotency_key=idempotency_key))

    def create_license_token(
        self,
        key: str,
        product_id: str,
        *,
        fingerprint: Optional[str] = None,
        ttl: Optional[int] = None,
    ) -> Dict[str, Any]:
        """``{"token", "payload", "license"}``: a token to check offline with :func:`keyturn.validate_license_token`."""
        body: Dict[str, Any] = {"key": key, "productId": product_id}
        if fingerprint is not None:
            body["fingerprint"] = fingerprint
        if ttl is not None:
            body["ttl"] = ttl
        return _object(self._call("POST", "/licenses/tokens", body, signed=True))

    def create_license_file(
        self,
        key: str,
        product_id: str,
        *,
        fingerprint: Optional[str] = None,
        ttl: Optional[int] = None,
        encrypt: bool = False,
    ) -> Dict[str, Any]:
        """``{"licenseFile", "expiresAt", "license"}``: a file to check offline with
        :func:`keyturn.verify_license_file`; for an activated machine when ``fingerprint`` is given,
        readable only with the license key (and that machine) when ``encrypt``."""
        body: Dict[str, Any] = {"key": key, "productId": product_id, "encrypt": encrypt}
        if fingerprint is not None:
            body["fingerprint"] = fingerprint
        if ttl is not None:
            body["ttl"] = ttl
        return _object(self._call("POST", "/licenses/license-file", body))

    def request(
        self,
        method: str,
        path: str,
        body: Optional[Mapping[str, Any]] = None,
        *,
        query: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> Any:
        """Any other API call (``path`` under ``/api/v0``), with the same errors and retry rules."""
        suffix = "" if not query else "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        return self._call(method.upper(), path + suffix, body, idempotency_key=idempotency_key)

    # The transport.

    def _call(
        self,
        method: str,
        path: str,
        body: Optional[Mapping[str, Any]] = None,
        *,
        repeatable: bool = False,
        signed: bool = False,
        idempotency_key: Optional[str] = None,
        keep: Optional[List[SignedAnswer]] = None,
        sign_with: Optional[_SignWith] = None,
    ) -> Any:
        headers = {
            "authorization": f"Bearer {self._api_key}",
            "accept": "application/json",
            "user-agent": USER_AGENT,
        }
        if body is not None:
            headers["content-type"] = "application/json"
        # A POST is retried only with an Idempotency-Key: the server answers a retry with the first response.
        if idempotency_key is None and method == "POST" and not repeatable and self._max_retries > 0:
            idempotency_key = str(uuid.uuid4())
        if idempotency_key is not None:
            headers["idempotency-key"] = idempotency_key
        retryable = method == "GET" or repeatable or (method == "POST" and idempotency_key is not None)
        # One nonce per call (its retries resend the same body): the answer must echo it, signed.
        if sign_with is None and self._public_key is not None:
            sign_with = _SignWith(self._public_key, self._now, self._tolerance)
        nonce = new_nonce() if signed and sign_with is not None else None
        if nonce is not None:
            body = {**(body or {}), "nonce": nonce}
            headers["keyturn-sign"] = "ed25519"
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
        url = f"{self._api_url}{path}"
        attempt = 0
        while True:
            try:
                return self._attempt(method, url, headers, data, nonce, keep, sign_with)
            except (ApiError, KeyturnConnectionError) as error:
                delay = self._retry_delay(error, attempt) if retryable else None
                if delay is None:
                    raise
            self._sleep(delay)
            attempt += 1

    def _retry_delay(self, error: Exception, attempt: int) -> Optional[float]:
        if attempt >= self._max_retries:
            return None
        backoff = self._random() * min(self._retry_max_delay, self._retry_base_delay * float(2**attempt))
        if isinstance(error, KeyturnConnectionError):
            return backoff
        if isinstance(error, ApiError) and (
            error.status >= 500 or error.status == 429 or error.code == "idempotency_key_in_progress"
        ):
            if error.retry_after is None:
                return backoff
            # The server said when: wait that long, unless it is longer than we would ever wait.
            return max(error.retry_after, backoff) if error.retry_after <= self._retry_max_delay else None
        return None

    def _attempt(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        data: Optional[bytes],
        nonce: Optional[str],
        keep: Optional[List[SignedAnswer]] = None,
        sign_with: Optional[_SignWith] = None,
    ) -> Any:
        request = urllib.request.Request(url, data=data, headers=dict(headers), method=method)
        origin = urllib.parse.urlsplit(url)
        try:
            try:
                with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310 (http/https only)
                    status = response.status
                    answer_headers = dict(response.headers.items())
                    raw = response.read()
            except urllib.error.HTTPError as refused:
                status = refused.code
                answer_headers = dict(refused.headers.items())
                raw = refused.read()
        except (urllib.error.URLError, HTTPException, OSError) as failure:
            raise KeyturnConnectionError(
                f"Cannot reach the Keyturn server at {origin.scheme}://{origin.netloc}: {failure}"
            ) from failure
        if status == 204:
            return None
        retry_after = _retry_after(next((v for k, v in answer_headers.items() if k.lower() == "retry-after"), None))
        try:
            parsed = None if raw == b"" else json.loads(raw.decode("utf-8"))
        except ValueError as error:
            if status >= 500 or status == 429:
                # A proxy's own error page: the status is what matters, and it may be retried.
                raise ApiError(self._bare_problem(status), retry_after) from error
            raise KeyturnConnectionError(f"The server did not answer with JSON (HTTP {status})") from error
        if status >= 400:
            problem = parsed if isinstance(parsed, dict) and "code" in parsed and "detail" in parsed else None
            raise ApiError(problem if problem is not None else self._bare_problem(status), retry_after)
        if nonce is not None and sign_with is not None:
            verify_signed_answer(
                status=status,
                method=method,
                path=urllib.parse.urlsplit(url).path,
                headers=answer_headers,
                body=raw,
                public_key=sign_with.public_key,
                nonce=nonce,
                now=sign_with.now(),
                tolerance_seconds=sign_with.tolerance_seconds,
            )
            if keep is not None:
                signature_headers = ("signature", "signature-input", "content-digest", "date")
                kept = {k.lower(): v for k, v in answer_headers.items() if k.lower() in signature_headers}
                path = urllib.parse.urlsplit(url).path
                keep.append(SignedAnswer(status=status, method=method, path=path, headers=kept, body=raw, nonce=nonce))
        return parsed

    @staticmethod
    def _bare_problem(status: int) -> Dict[str, Any]:
        return {
            "type": "about:blank",
            "status": status,
            "detail": f"HTTP {status} without a problem body",
            "code": "internal_error" if status >= 500 else "bad_request",
        }
