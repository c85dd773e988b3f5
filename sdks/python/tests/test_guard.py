"""The license guard: its options, its file store, and its states against a real ``keyturn serve``
(conformance/serve.mjs) that is stopped to make an outage, with an injected clock."""

from __future__ import annotations

import math
import os
import stat
import tempfile
import time
import unittest
from pathlib import Path
from typing import Any, Dict, List
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


class FileStorageTest(unittest.TestCase):
    def test_values_are_written_atomically_and_readable_only_by_the_user(self) -> None:
        with tempfile.TemporaryDirectory() as root:
            storage = keyturn.FileStorage(Path(root) / "keyturn")
            self.assertIsNone(storage.get("proof"))
            storage.set("proof", "first")
            storage.set("proof", "second")
            self.assertEqual(storage.get("proof"), "second")
            self.assertEqual(stat.S_IMODE(os.stat(Path(root) / "keyturn" / "proof").st_mode), 0o600)
            self.assertEqual(stat.S_IMODE(os.stat(Path(root) / "keyturn").st_mode), 0o700)
            self.assertEqual(os.listdir(Path(root) / "keyturn"), ["proof"])  # no temporary file left behind
            storage.delete("proof")
            storage.delete("proof")
            self.assertIsNone(storage.get("proof"))
            for bad in ("", "../escape", ".hidden", "a/b"):
                with self.assertRaises(ValueError):
                    storage.set(bad, "x")

    def test_the_default_folder_is_the_users_data_folder(self) -> None:
        with mock.patch.dict(os.environ, {"XDG_DATA_HOME": "/srv/data"}):
            self.assertEqual(keyturn.user_data_directory(), Path("/srv/data"))
            self.assertEqual(keyturn.FileStorage().directory, Path("/srv/data/keyturn"))
        with mock.patch.dict(os.environ, {"XDG_DATA_HOME": "relative/ignored"}):
            self.assertEqual(keyturn.user_data_directory(), Path.home() / ".local" / "share")


class OptionsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.key = load_vectors()["keys"]["product"]["publicKeyPem"]
        self.client = keyturn.Client("http://127.0.0.1:9", "kt_client_x", public_key=self.key, max_retries=0)
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
            {"client": keyturn.Client("http://127.0.0.1:9", "kt_client_x")},  # verifies no signed answers
            {"license_key": ""},
            {"product_id": ""},
            {"public_key": "not a key"},
            {"fingerprint": ""},
            {"grace_period": math.nan},
            {"grace_period": math.inf},
            {"grace_period": -1},
            {"clock_tolerance_seconds": math.nan},
            {"clock_tolerance_seconds": 86400},
            {"now": 1234},
            {"storage": object()},
            {"entitlements": "pro"},
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
        self.assertEqual((result.state, result.reason, result.license, result.valid_until), ("invalid", "no_proof", None, None))


class LiveGuard(unittest.TestCase):
    """One journey in order, since the server is stopped at the end to make the outage."""

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
            public_key=self.scenario["publicKeyPem"],
            timeout=10.0,
            retry_base_delay=0.01,  # the outage's retries, quickly
        )
        self.admin = keyturn.Client(self.scenario["baseUrl"], self.scenario["adminKey"], timeout=10.0)

    def guard(self, key: str, **options: Any) -> keyturn.LicenseGuard:
        settings: Dict[str, Any] = {
            "client": self.client,
            "license_key": key,
            "product_id": self.scenario["productId"],
            "public_key": self.scenario["publicKeyJwk"],
            "fingerprint": MACHINE,
            "storage": self.storage,
            "now": self.clock,
        }
        settings.update(options)
        return keyturn.LicenseGuard(**settings)

    def new_license(self, **fields: Any) -> Dict[str, Any]:
        license: Dict[str, Any] = self.admin.request(
            "POST", "/licenses", {"productId": self.scenario["productId"], "maxActivations": 2, **fields}
        )
        return license

    def new_policy(self, check_in_interval: int, grace_period: Any) -> str:
        policy: Dict[str, Any] = self.admin.request(
            "POST",
            "/policies",
            {
                "productId": self.scenario["productId"],
                "name": f"Check in every {check_in_interval} s, {grace_period} s of grace",
                "maxActivations": 2,
                "checkInInterval": check_in_interval,
                "gracePeriod": grace_period,
            },
        )
        return str(policy["id"])

    def test_online_then_offline_through_an_outage(self) -> None:
        license = self.new_license(entitlements=[])
        self.client.activate_license(license["key"], self.scenario["productId"], MACHINE)
        changes: List[keyturn.LicenseGuardStateChange] = []
        guard = self.guard(license["key"], on_change=changes.append)

        online = guard.check()
        self.assertEqual((online.state, online.reason), ("valid", "online"))
        self.assertEqual(online.license, keyturn.GuardLicense(id=license["id"], status="active", expires_at=None))
        self.assertIsNone(online.valid_until)  # no check-in required by this license
        stored = self.storage.get(guard.storage_key)
        assert stored is not None
        self.assertNotIn(license["key"], stored)  # sealed: the answer inside carries the key
        self.assertEqual(stat.S_IMODE(os.stat(Path(self.directory.name) / guard.storage_key).st_mode), 0o600)
        self.assertEqual(guard.check(), online)
        self.assertEqual(len(changes), 1)

        # A license the server refuses: invalid with the server's reason, and the proof is dropped.
        revoked = self.new_license()
        self.client.activate_license(revoked["key"], self.scenario["productId"], MACHINE)
        revoked_guard = self.guard(revoked["key"])
        self.assertEqual(revoked_guard.check().state, "valid")
        self.admin.request("POST", f"/licenses/{revoked['id']}/revoke", {})
        self.assertEqual((revoked_guard.check().state, revoked_guard.check().reason), ("invalid", "revoked"))
        self.assertIsNone(self.storage.get(revoked_guard.storage_key))

        # Not activated on this machine: the server's reason too.
        idle = self.new_license()
        self.assertEqual(self.guard(idle["key"]).check().reason, "not_activated")

        # An unknown API key: the server refused the check, which is not an outage.
        refused = self.guard(
            license["key"],
            client=keyturn.Client(
                self.scenario["baseUrl"], "kt_client_not-a-real-key-000000000000", public_key=self.scenario["publicKeyPem"]
            ),
        ).check()
        self.assertEqual((refused.state, refused.reason), ("invalid", "unauthenticated"))

        # Licenses whose policy asks for a check-in every day: with the policy's 2 days of grace,
        # and with none set (the guard's own 12 hours then).
        checked_in = self.new_license(policyId=self.new_policy(int(DAY), int(2 * DAY)))
        self.client.activate_license(checked_in["key"], self.scenario["productId"], MACHINE)
        daily = self.guard(checked_in["key"], grace_period=DAY / 2)
        before = time.time()
        online_daily = daily.check()
        after = time.time()
        self.assertEqual((online_daily.state, online_daily.reason), ("valid", "online"))
        assert online_daily.valid_until is not None
        self.assertTrue(before + DAY - 1 <= online_daily.valid_until.timestamp() <= after + DAY + 1)
        check_in_by = online_daily.valid_until.timestamp()
        no_policy_grace = self.new_license(policyId=self.new_policy(int(DAY), None))
        self.client.activate_license(no_policy_grace["key"], self.scenario["productId"], MACHINE)
        own_grace = self.guard(no_policy_grace["key"], grace_period=DAY / 2)
        self.assertEqual(own_grace.check().reason, "online")
        no_grace = self.guard(no_policy_grace["key"])  # the default: no grace at all
        self.assertEqual(no_grace.check().reason, "online")

        # The outage: the server is gone.
        self.server.stop()

        # Before the check-in deadline: valid; then the policy's grace (it wins over the option); then invalid.
        offline_daily = daily.check()
        self.assertEqual((offline_daily.state, offline_daily.reason), ("valid", "offline"))
        self.assertEqual(offline_daily.valid_until, online_daily.valid_until)
        self.clock.offset = 1.5 * DAY
        grace = daily.check()
        self.assertEqual((grace.state, grace.reason, grace.license), ("grace", "check_in_overdue", online_daily.license))
        assert grace.valid_until is not None
        self.assertAlmostEqual(grace.valid_until.timestamp(), check_in_by + 2 * DAY, places=3)
        self.assertEqual((own_grace.check().state, no_grace.check().reason), ("invalid", "grace_expired"))
        self.clock.offset = 1.25 * DAY
        self.assertEqual((own_grace.check().state, own_grace.check().reason), ("grace", "check_in_overdue"))
        self.assertEqual((no_grace.check().state, no_grace.check().reason), ("invalid", "grace_expired"))
        self.clock.offset = 3.5 * DAY
        expired = daily.check()
        self.assertEqual((expired.state, expired.reason, expired.valid_until), ("invalid", "grace_expired", None))
        self.clock.offset = 0
        offline = guard.check()
        self.assertEqual((offline.state, offline.reason, offline.license), ("valid", "offline", online.license))
        self.assertEqual(changes[-1].previous, online)
        self.assertEqual(changes[-1].current, offline)
        # A fresh guard (the application restarted) decides from the store alone.
        self.assertEqual(self.guard(license["key"]).check().reason, "offline")
        # Never across machines or licenses: another fingerprint or key cannot read the store.
        self.assertEqual(self.guard(license["key"], fingerprint="another-machine").check().reason, "no_proof")
        other = self.guard(idle["key"])
        self.storage.set(other.storage_key, stored)
        self.assertEqual(other.check().reason, "no_proof")

        # The clock wound back past the last signed server time: refused, by a restarted guard too.
        self.clock.offset = -3600
        self.assertEqual((guard.check().state, guard.check().reason), ("invalid", "clock_tampered"))
        self.assertEqual(self.guard(license["key"]).check().reason, "clock_tampered")
        self.clock.offset = -60  # within the tolerance
        self.assertEqual(guard.check().reason, "offline")

        # The stored license file runs out (a client key gets at most the product's clientTokenTtl, 7 days).
        self.clock.offset = 8 * DAY
        self.assertEqual((guard.check().state, guard.check().reason), ("invalid", "expired"))
        self.clock.offset = 0

        # A tampered or unreadable store counts as absent.
        self.storage.set(guard.storage_key, stored[:-8] + ("A" * 8 if not stored.endswith("A" * 8) else "B" * 8))
        self.assertEqual(guard.check().reason, "no_proof")
        self.storage.set(guard.storage_key, "not a proof")
        self.assertEqual(guard.check().reason, "no_proof")
        self.storage.delete(guard.storage_key)
        self.assertEqual(guard.check().reason, "no_proof")


if __name__ == "__main__":
    unittest.main()
