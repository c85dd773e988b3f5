"""Activation request files and deactivation codes: byte for byte the conformance vectors, and
bad arguments refused with InvalidOptionError, never written into a file or code."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import unittest
from datetime import datetime, timezone
from typing import Any, Dict

import keyturn
from keyturn._offline_activation import _encode_activation_request
from tests.support import load_vectors

VECTORS = load_vectors()
SECRET = VECTORS["deactivationCodes"][0]["secret"]


def instant(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def snake(payload: Dict[str, str]) -> Dict[str, str]:
    return {("product_id" if name == "productId" else name): value for name, value in payload.items()}


def read_request(text: str) -> Dict[str, Any]:
    """The payload of a request file, its HMAC checked with nothing but the standard library."""
    lines = text.split("\n")
    assert lines[0] == "-----BEGIN KEYTURN ACTIVATION REQUEST-----" and lines[-2:] == ["-----END KEYTURN ACTIVATION REQUEST-----", ""]
    assert all(len(line) <= 64 for line in lines[1:-2])
    signed, mac = "".join(lines[1:-2]).split(".")
    payload: Dict[str, Any] = json.loads(base64.urlsafe_b64decode(signed + "=" * (-len(signed) % 4)))
    return {"payload": payload, "signed": signed, "mac": mac}


class ActivationRequestVectors(unittest.TestCase):
    def test_every_request_vector_byte_for_byte(self) -> None:
        for vector in VECTORS["activationRequests"]:
            with self.subTest(vector["name"]):
                self.assertEqual(_encode_activation_request(vector["licenseKey"], snake(vector["payload"])), vector["request"])
                self.assertEqual(read_request(vector["request"])["payload"]["keyHint"], vector["keyHint"])

    def test_the_public_function_writes_the_vector_but_for_a_fresh_nonce(self) -> None:
        for vector in VECTORS["activationRequests"]:
            with self.subTest(vector["name"]):
                fields = vector["payload"]
                written = keyturn.create_activation_request(
                    vector["licenseKey"],
                    fields["productId"],
                    fields["fingerprint"],
                    name=fields.get("name"),
                    platform=fields.get("platform"),
                    now=instant(fields["created"]),
                )
                nonce = read_request(written)["payload"]["nonce"]
                self.assertRegex(nonce, r"^[A-Za-z0-9_-]{22}$")
                self.assertNotEqual(nonce, fields["nonce"])
                self.assertEqual(written, _encode_activation_request(vector["licenseKey"], snake({**fields, "nonce": nonce})))

    def test_now_as_epoch_seconds_keeps_milliseconds_and_drops_the_rest(self) -> None:
        for now, created in (
            (1_893_456_000, "2030-01-01T00:00:00.000Z"),
            (1_893_456_000.001, "2030-01-01T00:00:00.001Z"),
            (1_893_456_000.9999, "2030-01-01T00:00:00.999Z"),
            (datetime(2030, 1, 1, 0, 0, 0, 999_999), "2030-01-01T00:00:00.999Z"),
            (datetime(999, 12, 31, 23, 59, 59), "0999-12-31T23:59:59.000Z"),
        ):
            with self.subTest(now):
                written = keyturn.create_activation_request("Acme-1", "prd_x", "machine", now=now)
                self.assertEqual(read_request(written)["payload"]["created"], created)

    def test_the_hmac_is_keyed_by_the_key_as_stored(self) -> None:
        request = read_request(keyturn.create_activation_request("7k3qdm9xtb2vhcr8pnw f4zj6a", "prd_x", "machine"))
        stored = b"7K3QD-M9XTB-2VHCR-8PNWF-4ZJ6A"
        mac = hmac.new(stored, request["signed"].encode("ascii"), hashlib.sha256).digest()
        self.assertEqual(base64.urlsafe_b64encode(mac).rstrip(b"=").decode(), request["mac"])
        self.assertEqual(
            list(request["payload"]), ["format", "productId", "keyHint", "fingerprint", "nonce", "created"]
        )

    def test_keys_are_read_as_javascript_reads_them(self) -> None:
        # Separators are JavaScript's \s and the dash: Python's own \s would also drop U+001C and
        # U+0085, and keep U+FEFF.
        self.assertEqual(keyturn.canonical_license_key("ZZZZZ\ufeffzzzzz zzzzz zzzzz zzzzz"), "ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ")
        for kept in ("ZZZZZ\x1czzzzz zzzzz zzzzz zzzzz", "ZZZZZ\x85zzzzz zzzzz zzzzz zzzzz"):
            self.assertEqual(keyturn.canonical_license_key(kept), kept)

    def test_bad_arguments_are_refused_naming_the_argument(self) -> None:
        good: Dict[str, Any] = {"license_key": "Acme-1", "product_id": "prd_x", "fingerprint": "machine"}
        cases: Dict[str, Any] = {
            "now": [float("nan"), float("inf"), "2030-01-01T00:00:00Z", True, 1e15, -1e15],
            "product_id": ["", "p" * 65, None],
            "fingerprint": ["", "f" * 257, 7],
            "name": ["", "n" * 201, "\U0001f600" * 101, "half \ud800 a pair"],
            "platform": ["", "p" * 101],
            "license_key": ["", "k" * 257],
        }
        for option, values in cases.items():
            for value in values:
                with self.subTest(option=option, value=value):
                    with self.assertRaises(keyturn.InvalidOptionError) as refused:
                        keyturn.create_activation_request(**{**good, option: value})
                    self.assertEqual(refused.exception.option, option)
                    self.assertIsInstance(refused.exception, ValueError)

    def test_limits_are_counted_as_javascript_counts_them(self) -> None:
        # 100 emoji are 200 UTF-16 units: the longest name; 256 ASCII characters the longest fingerprint.
        written = keyturn.create_activation_request("Acme-1", "prd_x", "f" * 256, name="\U0001f600" * 100)
        self.assertEqual(read_request(written)["payload"]["name"], "\U0001f600" * 100)


class DeactivationCodeVectors(unittest.TestCase):
    def test_every_code_vector(self) -> None:
        for vector in VECTORS["deactivationCodes"]:
            with self.subTest(vector["name"]):
                at = instant(vector["now"])
                self.assertEqual(keyturn.create_deactivation_code(vector["activationId"], vector["secret"], now=at), vector["code"])
                self.assertEqual(
                    keyturn.create_deactivation_code(vector["activationId"], vector["secret"], now=at.timestamp()),
                    vector["code"],
                )

    def test_a_code_is_four_groups_of_crockford_characters(self) -> None:
        code = keyturn.create_deactivation_code("act_x", SECRET)
        self.assertRegex(code, r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$")

    def test_bad_arguments_are_refused_naming_the_argument(self) -> None:
        cases: Dict[str, Any] = {
            "now": [float("nan"), -60, datetime(1969, 12, 31, 23, 59, tzinfo=timezone.utc), 253_402_300_800, "now"],
            "activation_id": ["", "a" * 65, None],
            "secret": ["", SECRET[:-1], SECRET + "A", SECRET[:-1] + "=", SECRET + "\n", b"x" * 43],
        }
        for option, values in cases.items():
            for value in values:
                with self.subTest(option=option, value=value):
                    arguments: Dict[str, Any] = {"activation_id": "act_x", "secret": SECRET, "now": 1_893_456_000}
                    arguments[option] = value
                    with self.assertRaises(keyturn.InvalidOptionError) as refused:
                        keyturn.create_deactivation_code(**arguments)
                    self.assertEqual(refused.exception.option, option)


if __name__ == "__main__":
    unittest.main()
