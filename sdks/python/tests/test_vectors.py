"""The language-neutral conformance vectors (conformance/vectors.json): each must get the answer
the JavaScript client, the reference, gives."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import socket
import unittest
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

import keyturn
from tests.support import load_vectors

VECTORS = load_vectors()


def instant(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def keys(names: List[str]) -> List[str]:
    return [VECTORS["keys"][name]["publicKeyPem"] for name in names]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def as_reference(result: keyturn.OfflineValidationResult) -> Dict[str, Any]:
    """The JavaScript result shape: camelCase, without the optional fields that are absent."""
    fields = {camel(name): value for name, value in dataclasses.asdict(result).items()}
    for optional in ("fingerprint", "checkInBy", "gracePeriod"):
        if fields[optional] is None:
            del fields[optional]
    return fields


def answer(run: Callable[[], Any]) -> Dict[str, Any]:
    try:
        value = run()
    except (keyturn.TokenError, keyturn.SignatureError, keyturn.WebhookError) as error:
        return {"valid": False, "error": error.code}
    return {"valid": True, "value": value}


class TokenVectors(unittest.TestCase):
    def test_every_token_vector(self) -> None:
        for vector in VECTORS["tokens"]:
            with self.subTest(vector["name"]):
                options = vector["options"]
                got = answer(
                    lambda: keyturn.validate_license_token(
                        vector["token"],
                        public_key=keys(options["publicKeys"]),
                        product_id=options["productId"],
                        fingerprint=options.get("fingerprint"),
                        now=instant(options["now"]),
                        require_entitlements=options.get("requireEntitlements"),
                    )
                )
                expect = vector["expect"]
                if expect["valid"]:
                    self.assertTrue(got["valid"], got)
                    self.assertEqual(as_reference(got["value"]), expect["result"])
                else:
                    self.assertEqual(got, expect)

    def test_a_jwk_works_like_its_pem(self) -> None:
        vector = VECTORS["tokens"][0]
        pem = VECTORS["keys"]["product"]["publicKeyPem"]
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key

        raw = load_pem_public_key(pem.encode()).public_bytes(Encoding.Raw, PublicFormat.Raw)
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": keyturn._keys.b64url_encode(raw)}
        result = keyturn.validate_license_token(
            vector["token"], public_key=jwk, product_id=vector["options"]["productId"], now=instant(vector["options"]["now"])
        )
        self.assertEqual(result.license_id, vector["expect"]["result"]["licenseId"])


    def test_an_invalid_clock_option_is_refused_never_read_as_no_limit(self) -> None:
        expired = next(v for v in VECTORS["tokens"] if v["name"] == "expired")
        pem = VECTORS["keys"]["product"]["publicKeyPem"]
        product = expired["options"]["productId"]
        for options in ({"now": float("nan")}, {"now": float("inf")}, {"now": "2030-01-01"}, {"clock_tolerance_seconds": -1},
                        {"clock_tolerance_seconds": 3601}, {"clock_tolerance_seconds": float("nan")}):
            with self.subTest(options), self.assertRaises(ValueError):
                keyturn.validate_license_token(expired["token"], public_key=pem, product_id=product, **options)  # type: ignore[arg-type]


class SignedAnswerVectors(unittest.TestCase):
    def test_every_signed_answer_vector(self) -> None:
        for vector in VECTORS["signedAnswers"]:
            with self.subTest(vector["name"]):
                signed, check = vector["answer"], vector["check"]
                got = answer(
                    lambda: keyturn.verify_signed_answer(
                        status=signed["status"],
                        method=signed["method"],
                        path=signed["path"],
                        headers=signed["headers"],
                        body=signed["body"].encode("utf-8"),
                        public_key=keys(check["publicKeys"]),
                        nonce=check["nonce"],
                        now=instant(check["now"]),
                        tolerance_seconds=check["toleranceSeconds"],
                    )
                )
                got.pop("value", None)
                self.assertEqual(got, vector["expect"])


class WebhookVectors(unittest.TestCase):
    def test_every_webhook_vector(self) -> None:
        for vector in VECTORS["webhooks"]:
            with self.subTest(vector["name"]):
                got = answer(
                    lambda: keyturn.verify_webhook(
                        vector["payload"], vector["headers"], vector["secret"], now=instant(vector["now"])
                    )
                )
                if got["valid"]:
                    got = {"valid": True, "event": got["value"]}
                self.assertEqual(got, vector["expect"])


    def test_a_payload_given_as_bytes_is_checked_as_received(self) -> None:
        vector = VECTORS["webhooks"][0]
        event = keyturn.verify_webhook(
            vector["payload"].encode("utf-8"), vector["headers"], vector["secret"], now=instant(vector["now"])
        )
        self.assertEqual(event, vector["expect"]["event"])
        with self.assertRaises(keyturn.WebhookError) as refused:
            keyturn.verify_webhook(b"\xff" + vector["payload"].encode(), vector["headers"], vector["secret"], now=instant(vector["now"]))
        self.assertEqual(refused.exception.code, "invalid_signature")


class FingerprintVectors(unittest.TestCase):
    def test_every_fingerprint_vector(self) -> None:
        for vector in VECTORS["fingerprints"]:
            with self.subTest(vector["salt"]):
                self.assertEqual(keyturn.machine_fingerprint(vector["salt"], vector["machineId"]), vector["fingerprint"])

    def test_this_machine_has_a_stable_fingerprint(self) -> None:
        first = keyturn.machine_fingerprint("my-app")
        self.assertRegex(first, "^[0-9a-f]{64}$")
        self.assertEqual(first, keyturn.machine_fingerprint("my-app"))
        self.assertNotEqual(first, keyturn.machine_fingerprint("another-app"))


if __name__ == "__main__":
    unittest.main()


class LicenseFileVectors(unittest.TestCase):
    def test_every_license_file_vector(self) -> None:
        for vector in VECTORS["licenseFiles"]:
            with self.subTest(vector["name"]):
                options = vector["options"]
                try:
                    result = keyturn.verify_license_file(
                        vector["file"],
                        public_key=keys(options["publicKeys"]),
                        product_id=options["productId"],
                        license_key=options.get("licenseKey"),
                        fingerprint=options.get("fingerprint"),
                        now=instant(options["now"]),
                        require_entitlements=options.get("requireEntitlements"),
                    )
                except keyturn.LicenseFileError as error:
                    self.assertEqual({"valid": False, "error": error.code}, vector["expect"])
                    continue
                self.assertTrue(vector["expect"]["valid"], vector["expect"])
                fields = {camel(name): value for name, value in dataclasses.asdict(result).items()}
                for optional in ("fingerprint", "activationId", "deactivationSecret", "checkInBy", "gracePeriod"):
                    if fields[optional] is None:
                        del fields[optional]
                self.assertEqual(fields, vector["expect"]["result"])

    def test_refuses_an_invalid_clock_before_anything_else(self) -> None:
        vector = VECTORS["licenseFiles"][0]
        for bad in (float("nan"), float("inf")):
            with self.assertRaises(ValueError):
                keyturn.verify_license_file(
                    vector["file"], public_key=keys(["product"]), product_id="prd_x", now=bad
                )
        with self.assertRaises(ValueError):
            keyturn.verify_license_file(
                vector["file"], public_key=keys(["product"]), product_id="prd_x", clock_tolerance_seconds=-1
            )


class MemoryStorage:
    """A guard store of the application's own, in memory."""

    def __init__(self) -> None:
        self.values: Dict[str, str] = {}

    def get(self, key: str) -> Optional[str]:
        return self.values.get(key)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def delete(self, key: str) -> None:
        self.values.pop(key, None)


def sealed_record(answer: str, license_key: str, fingerprint: Optional[str]) -> str:
    """The guard's stored record, sealed as docs/sdks.md ("The stored proof") describes."""
    record = json.dumps({"answer": answer, "fingerprint": fingerprint}).encode("utf-8")
    salt, iv = os.urandom(16), os.urandom(12)
    material = f"{license_key}\n{fingerprint or ''}".encode("utf-8")
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"keyturn-guard/1 aes-256-gcm").derive(material)
    sealed = AESGCM(key).encrypt(iv, record, b"keyturn-guard/1")
    return ".".join(["keyturn-guard/1"] + [base64.b64encode(part).decode("ascii") for part in (salt, iv, sealed)])


def unreachable_url() -> str:
    """An address nothing listens on: a port that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


class GuardVectors(unittest.TestCase):
    def test_every_guard_vector_offline(self) -> None:
        self.assertGreater(len(VECTORS["guard"]), 0)
        client = keyturn.Client(unreachable_url(), "kt_client_conformance", max_retries=0)
        for vector in VECTORS["guard"]:
            with self.subTest(vector["name"]):
                options = vector["options"]
                storage = MemoryStorage()
                storage.set(
                    f"keyturn-guard:{options['productId']}", sealed_record(vector["proof"], options["licenseKey"], None)
                )
                extra = {"grace_period": options["gracePeriod"]} if "gracePeriod" in options else {}
                guard = keyturn.LicenseGuard(
                    client=client,
                    license_key=options["licenseKey"],
                    product_id=options["productId"],
                    public_key=keys(options["publicKeys"]),
                    storage=storage,
                    now=lambda at=instant(options["now"]): at,
                    **extra,
                )
                result = guard.check()
                until = result.valid_until
                got = {
                    "state": result.state,
                    "reason": result.reason,
                    "license": None
                    if result.license is None
                    else {"id": result.license.id, "status": result.license.status, "expiresAt": result.license.expires_at},
                    "entitlements": list(result.entitlements),
                    "validUntil": None
                    if until is None
                    else until.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                }
                self.assertEqual(got, vector["expect"])
