"""The live scenario (conformance/scenario.md) against a real ``keyturn serve``."""

from __future__ import annotations

import unittest
from typing import Any, Dict

import keyturn
from tests.support import ScenarioServer, load_vectors

MACHINE = keyturn.machine_fingerprint("keyturn-python-scenario", "scenario-machine")
UNKNOWN_KEY = "ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ-ZZZZZ"


class LiveScenario(unittest.TestCase):
    server: ScenarioServer
    scenario: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ScenarioServer()
        cls.scenario = cls.server.scenario

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def client(self, **options: Any) -> keyturn.Client:
        settings: Dict[str, Any] = {"public_key": self.scenario["publicKeyPem"], "timeout": 10.0}
        settings.update(options)
        api_key = settings.pop("api_key", self.scenario["clientKey"])
        return keyturn.Client(self.scenario["baseUrl"], api_key, **settings)

    def test_the_scenario_in_order(self) -> None:
        s = self.scenario
        product, main, full = s["productId"], s["licenses"]["main"], s["licenses"]["full"]
        client = self.client()

        # Activate, validate (signed), heartbeat, usage.
        self.assertTrue(client.validate_license(main["key"], product)["isValid"])
        activation = client.activate_license(main["key"], product, MACHINE, name="scenario")
        self.assertEqual(activation["fingerprint"], MACHINE)
        validation = client.validate_license(main["key"], product, fingerprint=MACHINE)
        self.assertEqual((validation["isValid"], validation["reason"]), (True, None))
        self.assertEqual(client.heartbeat_license(main["key"], product, MACHINE)["fingerprint"], MACHINE)
        self.assertEqual(client.increment_usage(main["key"], product, 2)["uses"], 2)

        # A token, checked offline on this machine and refused on another.
        issued = client.create_license_token(main["key"], product, fingerprint=MACHINE)
        result = keyturn.validate_license_token(
            issued["token"], public_key=s["publicKeyPem"], product_id=product, fingerprint=MACHINE
        )
        self.assertEqual((result.license_id, result.fingerprint), (main["id"], MACHINE))
        with self.assertRaises(keyturn.TokenError) as refused:
            keyturn.validate_license_token(
                issued["token"], public_key=s["publicKeyJwk"], product_id=product, fingerprint="another-machine"
            )
        self.assertEqual(refused.exception.code, "fingerprint_mismatch")

        # A license file for this machine, encrypted: read offline here, useless on another machine.
        made = client.create_license_file(main["key"], product, fingerprint=MACHINE, encrypt=True)
        checked = keyturn.verify_license_file(
            made["licenseFile"],
            public_key=s["publicKeyPem"],
            product_id=product,
            license_key=main["key"],
            fingerprint=MACHINE,
        )
        self.assertEqual((checked.license_id, checked.fingerprint, checked.encrypted), (main["id"], MACHINE, True))
        with self.assertRaises(keyturn.LicenseFileError) as unreadable:
            keyturn.verify_license_file(
                made["licenseFile"],
                public_key=s["publicKeyPem"],
                product_id=product,
                license_key=main["key"],
                fingerprint="another-machine",
            )
        self.assertEqual(unreadable.exception.code, "decryption_failed")

        # Deactivate: the machine is no longer activated.
        self.assertIsNone(client.deactivate_license(main["key"], product, MACHINE))
        validation = client.validate_license(main["key"], product, fingerprint=MACHINE)
        self.assertEqual((validation["isValid"], validation["reason"]), (False, "not_activated"))

        self.offline_round_trip()

        # 409: every seat of the full license is taken.
        with self.assertRaises(keyturn.ApiError) as limit:
            client.activate_license(full["key"], product, MACHINE)
        self.assertEqual((limit.exception.status, limit.exception.code), (409, "activation_limit_reached"))

        # A signed answer checked against a key that is not the product's.
        stranger = self.client(public_key=load_vectors()["keys"]["other"]["publicKeyPem"])
        with self.assertRaises(keyturn.SignatureError) as spoofed:
            stranger.validate_license(main["key"], product)
        self.assertEqual(spoofed.exception.code, "unknown_key")

        # 401: an unknown API key.
        with self.assertRaises(keyturn.ApiError) as unauthenticated:
            self.client(api_key="kt_client_not-a-real-key-000000000000").validate_license(main["key"], product)
        self.assertEqual((unauthenticated.exception.status, unauthenticated.exception.code), (401, "unauthenticated"))

        # 404, then 429 with Retry-After once the address has guessed too many unknown keys (last:
        # the address stays blocked). The wait asked for is longer than the client ever waits, so
        # the 429 is answered at once, not retried.
        with self.assertRaises(keyturn.ApiError) as unknown:
            client.validate_license(UNKNOWN_KEY, product)
        self.assertEqual((unknown.exception.status, unknown.exception.code), (404, "license_not_found"))
        for _ in range(s["guessLimit"]):
            with self.assertRaises(keyturn.ApiError) as guessed:
                client.validate_license(UNKNOWN_KEY, product)
            if guessed.exception.status == 429:
                break
        self.assertEqual((guessed.exception.status, guessed.exception.code), (429, "rate_limited"))
        self.assertIsNotNone(guessed.exception.retry_after)
        self.assertGreater(guessed.exception.retry_after or 0, 20)

    def offline_round_trip(self) -> None:
        """An air-gapped machine: its request file (the key typed in lower case without dashes, a name
        outside ASCII with characters JSON escapes differently) turned into a license file by the
        vendor (an admin key), read on the machine, and its seat given back with a deactivation code,
        a wrong code refused first."""
        s = self.scenario
        product, main = s["productId"], s["licenses"]["main"]
        machine = keyturn.machine_fingerprint("keyturn-python-scenario", "air-gapped-machine")
        name = "Poste de Zoé ✓ <lab & co> \u2028"
        request = keyturn.create_activation_request(
            main["key"].lower().replace("-", ""), product, machine, name=name, platform="linux-x64"
        )
        vendor = keyturn.Client(s["baseUrl"], s["adminKey"], timeout=10.0)
        answer = vendor.request("POST", "/licenses/activate-offline", {"request": request})
        activation = answer["activation"]
        self.assertEqual((activation["fingerprint"], activation["name"]), (machine, name))
        checked = keyturn.verify_license_file(
            answer["licenseFile"], public_key=s["publicKeyPem"], product_id=product, license_key=main["key"], fingerprint=machine
        )
        self.assertEqual((checked.activation_id, checked.encrypted), (activation["id"], True))
        assert checked.activation_id is not None and checked.deactivation_secret is not None
        path = f"/activations/{checked.activation_id}/deactivate-offline"
        wrong = keyturn.create_deactivation_code(checked.activation_id, "A" * 43)
        with self.assertRaises(keyturn.ApiError) as refused:
            vendor.request("POST", path, {"code": wrong})
        self.assertEqual((refused.exception.status, refused.exception.code), (422, "deactivation_code_invalid"))
        code = keyturn.create_deactivation_code(checked.activation_id, checked.deactivation_secret)
        self.assertIsNone(vendor.request("POST", path, {"code": code}))
        # The seat is free: the activation is gone.
        with self.assertRaises(keyturn.ApiError) as gone:
            vendor.request("GET", f"/activations/{checked.activation_id}")
        self.assertEqual((gone.exception.status, gone.exception.code), (404, "activation_not_found"))


if __name__ == "__main__":
    unittest.main()
