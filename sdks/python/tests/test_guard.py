"""The license guard: its options, its file store, and its states against a real ``keyturn serve``
(conformance/serve.mjs) that is stopped to make an outage, with an injected clock."""

from __future__ import annotations

import http.server
import math
import os
import stat
import tempfile
import threading
import time
import unittest
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional
from unittest import mock

import keyturn
from tests.support import ScenarioServer, load_vectors

MACHINE = keyturn.machine_fingerprint("keyturn-python-guard", "guard-machine")
DAY = 86400.0


class Clock:
    """The guard's injected clock: real time plus an offset the test moves."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


class Proxy:
    """A real HTTP server standing in for a proxy in front of Keyturn: it answers every request
    with one status and a plain-text page."""

    def __init__(self, status: int) -> None:
        answer = status

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(answer)
                self.send_header("content-type", "text/plain")
                self.end_headers()
                self.wfile.write(b"The service is unavailable.")

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Proxy":
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


class FileStorageTest(unittest.TestCase):
    def test_values_are_written_atomically_and_readable_only_by_the_user(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            storage = keyturn.FileStorage(Path(root) / "keyturn")
            self.assertIsNone(storage.get("keyturn-guard:prd_1"))
            storage.set("keyturn-guard:prd_1", "first")
            storage.set("keyturn-guard:prd_1", "second")
            self.assertEqual(storage.get("keyturn-guard:prd_1"), "second")
            path = storage.path("keyturn-guard:prd_1")
            self.assertRegex(path.name, r"^[0-9a-f]{32}\.store$")  # a safe name that says nothing of the key
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
            self.assertEqual(stat.S_IMODE(os.stat(path.parent).st_mode), 0o700)
            self.assertEqual(os.listdir(path.parent), [path.name])  # no temporary file left behind
            storage.delete("keyturn-guard:prd_1")
            storage.delete("keyturn-guard:prd_1")
            self.assertIsNone(storage.get("keyturn-guard:prd_1"))
            with self.assertRaises(ValueError):
                storage.set("", "x")

    def test_the_default_folder_is_the_users_data_folder(self) -> None:
        with mock.patch.dict(os.environ, {"XDG_DATA_HOME": "/srv/data"}):
            self.assertEqual(keyturn.user_data_directory(), Path("/srv/data"))
            self.assertEqual(keyturn.FileStorage().directory, Path("/srv/data/keyturn"))
        with mock.patch.dict(os.environ, {"XDG_DATA_HOME": "relative/ignored"}):
            self.assertEqual(keyturn.user_data_directory(), Path.home() / ".local" / "share")


class OptionsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.key = load_vectors()["keys"]["product"]["publicKeyPem"]
        self.client = keyturn.Client("http://127.0.0.1:9", "kt_client_x", max_retries=0)
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def guard(self, **options: Any) -> keyturn.LicenseGuard:
        settings: Dict[str, Any] = {
            "client": self.client,
            "license_key": "AAAAA-BBBBB-CCCCC-DDDDD-EEEEE",
            "product_id": "prd_guard",
            "public_key": self.key,
            "storage": keyturn.FileStorage(self.directory.name),
        }
        settings.update(options)
        return keyturn.LicenseGuard(**settings)

    def test_invalid_options_raise_before_anything_is_checked(self) -> None:
        invalid: List[Dict[str, Any]] = [
            {"client": object()},
            {"license_key": ""},
            {"product_id": ""},
            {"public_key": "not a key"},
            {"public_key": []},
            {"fingerprint": ""},
            {"grace_period": math.nan},
            {"grace_period": math.inf},
            {"grace_period": -1},
            {"grace_period": 1.5},
            {"grace_period": 3651 * DAY},
            {"clock_tolerance_seconds": math.nan},
            {"clock_tolerance_seconds": 86400},
            {"now": 1234},
            {"storage": object()},
            {"license_file": b"bytes"},
            {"storage_key": ""},
        ]
        for options in invalid:
            with self.subTest(options=options), self.assertRaises((ValueError, TypeError)):
                self.guard(**options)

    def test_a_clock_that_is_not_a_time_raises_rather_than_deciding(self) -> None:
        for value in (math.nan, math.inf):
            with self.subTest(now=value), self.assertRaises(ValueError):
                self.guard(now=lambda value=value: value).check()

    def test_unreachable_with_nothing_stored_is_invalid(self) -> None:
        result = self.guard().check()
        self.assertEqual(result, keyturn.LicenseGuardResult("invalid", "no_proof", None, (), None))


class LiveGuard(unittest.TestCase):
    """One journey in order, since the server is stopped halfway to make the outage."""

    server: ScenarioServer
    scenario: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ScenarioServer()
        cls.scenario = cls.server.scenario

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def setUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)
        self.storage = keyturn.FileStorage(self.directory.name)
        self.clock = Clock()
        self.client = keyturn.Client(
            self.scenario["baseUrl"],
            self.scenario["clientKey"],
            timeout=10.0,
            retry_base_delay=0.01,  # the outage's retries, quickly
        )
        self.admin = keyturn.Client(self.scenario["baseUrl"], self.scenario["adminKey"], timeout=10.0)
        self.ids: Dict[str, str] = {}

    def guard(self, key: str, **options: Any) -> keyturn.LicenseGuard:
        settings: Dict[str, Any] = {
            "client": self.client,
            "license_key": key,
            "product_id": self.scenario["productId"],
            "public_key": self.scenario["publicKeyJwk"],
            "fingerprint": MACHINE,
            "storage": self.storage,
            "storage_key": f"guard:{key}",  # several licenses of one product on this "machine"
            "now": self.clock,
        }
        settings.update(options)
        return keyturn.LicenseGuard(**settings)

    def license(self, *, activate: bool = True, **fields: Any) -> str:
        """A new license's key, activated on this machine (its id in ``self.ids``)."""
        made: Dict[str, Any] = self.admin.request(
            "POST", "/licenses", {"productId": self.scenario["productId"], "maxActivations": 2, **fields}
        )
        if activate:
            self.client.activate_license(made["key"], self.scenario["productId"], MACHINE)
        self.ids[made["key"]] = made["id"]
        return str(made["key"])

    def policy(self, grace_period: Optional[int]) -> str:
        """A policy asking for a check-in every day."""
        made: Dict[str, Any] = self.admin.request(
            "POST",
            "/policies",
            {
                "productId": self.scenario["productId"],
                "name": f"Daily check-in, grace {grace_period}",
                "maxActivations": 2,
                "checkInInterval": int(DAY),
                "gracePeriod": grace_period,
            },
        )
        return str(made["id"])

    def assert_result(self, guard: keyturn.LicenseGuard, state: str, reason: str) -> keyturn.LicenseGuardResult:
        result = guard.check()
        self.assertEqual((result.state, result.reason), (state, reason), result)
        return result

    def test_online_then_through_an_outage(self) -> None:
        product = self.scenario["productId"]
        # No check-in policy: the guard's own grace period (3 days by default) counts from the answer.
        plain_key = self.license()
        changes: List[keyturn.LicenseGuardStateChange] = []
        plain = self.guard(plain_key, on_change=changes.append)
        online = self.assert_result(plain, "valid", "online")
        assert online.license is not None and online.valid_until is not None
        self.assertEqual((online.license.status, online.license.expires_at, online.entitlements), ("active", None, ()))
        self.assertLess(abs(online.valid_until.timestamp() - time.time()), 5)  # no check-in: the answer's time
        stored = self.storage.get(plain.storage_key)
        assert stored is not None
        self.assertNotIn(plain_key, stored)  # sealed: the answer inside carries the key
        self.assertEqual(stat.S_IMODE(os.stat(self.storage.path(plain.storage_key)).st_mode), 0o600)
        online = self.assert_result(plain, "valid", "online")  # the stored answer is now this one
        assert online.valid_until is not None
        self.assertEqual(len(changes), 1)

        # A daily check-in with the policy's 2 days of grace (it wins over the option), with none
        # set (the option then), and a license that expires in 2 days.
        daily = self.guard(self.license(policyId=self.policy(int(2 * DAY))), grace_period=int(DAY / 2))
        before = time.time()
        online_daily = self.assert_result(daily, "valid", "online")
        assert online_daily.valid_until is not None
        check_in_by = online_daily.valid_until.timestamp()
        self.assertTrue(before + DAY - 1 <= check_in_by <= time.time() + DAY + 1)
        own_policy = self.policy(None)
        own_grace_key = self.license(policyId=own_policy)
        own_grace = self.guard(own_grace_key, grace_period=int(DAY / 2))
        no_grace = self.guard(own_grace_key, grace_period=0, storage_key="guard:no-grace")
        ending = (datetime.now(timezone.utc) + timedelta(days=2)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        ends_soon = self.guard(self.license(policyId=own_policy, expirationDate=ending))
        for guard in (own_grace, no_grace, ends_soon):
            self.assert_result(guard, "valid", "online")

        # A license file for this machine, given to a guard that has no stored answer.
        file_key = self.license(policyId=self.policy(int(2 * DAY)))
        made = self.client.create_license_file(file_key, product, fingerprint=MACHINE, encrypt=True)
        from_file = self.guard(file_key, license_file=made["licenseFile"])

        # The server's refusals.
        revoked_key = self.license()
        revoked = self.guard(revoked_key)
        self.assert_result(revoked, "valid", "online")
        self.admin.request("POST", f"/licenses/{self.ids[revoked_key]}/revoke", {})
        self.assertEqual(self.assert_result(revoked, "invalid", "revoked").entitlements, ())
        idle = self.license(activate=False)
        self.assert_result(self.guard(idle), "invalid", "not_activated")
        stranger = keyturn.Client(self.scenario["baseUrl"], "kt_client_not-a-real-key-000000000000")
        self.assert_result(self.guard(plain_key, client=stranger), "invalid", "request_refused")
        unknown = self.guard("ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ")
        self.assertEqual(unknown.check(), keyturn.LicenseGuardResult("invalid", "license_not_found", None, (), None))

        # A clock wound back while the server answers: its fresh answer is signed later than now.
        self.clock.offset = -3600
        self.assert_result(plain, "invalid", "clock_tampered")
        # A clock a day ahead: the answer is stale for it, so it is judged from the proof.
        self.clock.offset = DAY
        self.assert_result(plain, "grace", "check_in_overdue")
        self.clock.offset = 0
        online = self.assert_result(plain, "valid", "online")
        assert online.valid_until is not None

        # The outage.
        self.server.stop()
        offline = self.assert_result(plain, "grace", "check_in_overdue")
        self.assertEqual(offline.license, online.license)
        assert offline.valid_until is not None
        self.assertAlmostEqual(offline.valid_until.timestamp(), online.valid_until.timestamp() + 3 * DAY, places=3)
        self.assertEqual((changes[-1].previous, changes[-1].current), (online, offline))
        self.assertEqual(len(changes), 5)
        self.assertEqual(self.guard(plain_key).check().reason, "check_in_overdue")  # the application restarted
        # A proxy in front of the server answering 503 or 429 is an outage too, and so is a page
        # that is not Keyturn's JSON (a captive portal's 400).
        for status in (503, 429, 400):
            with Proxy(status) as proxy:
                client = keyturn.Client(proxy.url, self.scenario["clientKey"], max_retries=0)
                self.assertEqual(self.guard(plain_key, client=client).check().reason, "check_in_overdue", status)
        # An answer not signed by the product's key is never trusted (here: a guard given another key).
        stranger_key = load_vectors()["keys"]["other"]["publicKeyPem"]
        self.assertEqual(self.guard(plain_key, public_key=stranger_key).check().reason, "no_proof")
        # The stored signed "revoked" still says so.
        self.assert_result(revoked, "invalid", "revoked")
        # Never across machines or licenses: the store does not open for them.
        self.assert_result(self.guard(plain_key, fingerprint="another-machine"), "invalid", "no_proof")
        self.storage.set(f"guard:{idle}", stored)
        self.assert_result(self.guard(idle), "invalid", "no_proof")

        # Before the check-in deadline, valid; then the grace; then invalid.
        self.assertEqual(self.assert_result(daily, "valid", "offline").valid_until, online_daily.valid_until)
        self.assert_result(from_file, "valid", "offline")
        self.clock.offset = 1.25 * DAY
        self.assert_result(own_grace, "grace", "check_in_overdue")
        self.assert_result(no_grace, "invalid", "grace_expired")
        self.clock.offset = 1.5 * DAY
        grace = self.assert_result(daily, "grace", "check_in_overdue")
        assert grace.valid_until is not None
        self.assertAlmostEqual(grace.valid_until.timestamp(), check_in_by + 2 * DAY, places=3)
        self.assertEqual(grace.license, online_daily.license)
        self.assert_result(own_grace, "invalid", "grace_expired")
        self.assert_result(from_file, "grace", "check_in_overdue")
        self.clock.offset = 2.5 * DAY
        self.assert_result(ends_soon, "invalid", "expired")  # the license's own end, offline
        self.assert_result(plain, "grace", "check_in_overdue")
        self.clock.offset = 3.5 * DAY
        self.assertEqual(daily.check(), keyturn.LicenseGuardResult("invalid", "grace_expired", online_daily.license, (), None))
        self.assert_result(plain, "invalid", "grace_expired")

        # The clock wound back past the last signed server time: refused, by a restarted guard too.
        self.clock.offset = -3600
        self.assert_result(plain, "invalid", "clock_tampered")
        self.assert_result(self.guard(plain_key), "invalid", "clock_tampered")
        self.assert_result(self.guard(file_key, license_file=made["licenseFile"]), "invalid", "clock_tampered")
        self.clock.offset = -60  # within the tolerance (and before the answer's time: not yet overdue)
        self.assert_result(plain, "valid", "offline")
        self.clock.offset = 0

        # A tampered or unreadable store counts as absent.
        tampered = stored[:-8] + ("B" * 8 if stored.endswith("A" * 8) else "A" * 8)
        for value in (tampered, "not a proof"):
            self.storage.set(plain.storage_key, value)
            self.assert_result(plain, "invalid", "no_proof")
        plain.forget()
        self.assert_result(plain, "invalid", "no_proof")


if __name__ == "__main__":
    unittest.main()
