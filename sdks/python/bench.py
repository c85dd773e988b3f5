"""Offline token and license-file checks vs a bare Ed25519 verify, in process: python3 bench.py
(from sdks/python).

Both verify the same signature over the same bytes with the same key; the token check adds the
parsing, the key lookup (imported once per process) and the claims checks. Reports calls per second
of each and their ratio (the target is at least 80%)."""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).parent / "src"))

import keyturn  # noqa: E402
from cryptography.hazmat.primitives.serialization import load_pem_public_key  # noqa: E402
from keyturn._tokens import _decode_canonical  # noqa: E402

vectors = json.loads((Path(__file__).parents[2] / "conformance" / "vectors.json").read_text())
vector = next(v for v in vectors["tokens"] if v["name"] == "valid-custom-fields-entitlements")
plain = next(v for v in vectors["tokens"] if v["name"] == "valid")["token"]
pem = vectors["keys"]["product"]["publicKeyPem"]
options = vector["options"]
now = datetime.fromisoformat(options["now"].replace("Z", "+00:00"))
token = vector["token"]
header, payload, signature = token.split(".")
key = load_pem_public_key(pem.encode())
signature_bytes = _decode_canonical(signature) or b""


def rate(run: Callable[[], object], seconds: float = 1.0) -> float:
    for _ in range(200):
        run()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            run()
        count += 200
    return count / (time.perf_counter() - start)


def check() -> object:
    return keyturn.validate_license_token(token, public_key=pem, product_id=options["productId"], now=now)


def check_plain() -> object:
    return keyturn.validate_license_token(plain, public_key=pem, product_id=options["productId"], now=now)


def bare() -> object:
    key.verify(signature_bytes, f"{header}.{payload}".encode("ascii"))  # type: ignore[union-attr]
    return None


file_vector = next(v for v in vectors["licenseFiles"] if v["name"] == "valid-clear")
file_now = datetime.fromisoformat(file_vector["options"]["now"].replace("Z", "+00:00"))
file_body = "".join(file_vector["file"].strip().splitlines()[1:-1])
file_header, file_payload, file_signature = file_body.split(".")
file_signature_bytes = _decode_canonical(file_signature) or b""


def check_file() -> object:
    return keyturn.verify_license_file(
        file_vector["file"], public_key=pem, product_id=file_vector["options"]["productId"], now=file_now
    )


def bare_file() -> object:
    key.verify(file_signature_bytes, f"{file_header}.{file_payload}".encode("ascii"))  # type: ignore[union-attr]
    return None


# Interleaved short rounds, best of each: the machine is shared, so a slow round says little.
rounds = [(rate(check, 0.3), rate(check_plain, 0.3), rate(bare, 0.3)) for _ in range(10)]
best_check, best_plain, best_bare = (max(r[i] for r in rounds) for i in range(3))
print(
    f"validate_license_token: {best_check:,.0f}/s with custom fields and entitlements ({best_check / best_bare:.0%}), "
    f"{best_plain:,.0f}/s plain ({best_plain / best_bare:.0%}); bare Ed25519 verify: {best_bare:,.0f}/s"
)
file_rounds = [(rate(check_file, 0.3), rate(bare_file, 0.3)) for _ in range(10)]
best_file, best_file_bare = (max(r[i] for r in file_rounds) for i in range(2))
print(
    f"verify_license_file (clear): {best_file:,.0f}/s ({best_file / best_file_bare:.0%}); "
    f"bare Ed25519 verify of its bytes: {best_file_bare:,.0f}/s"
)

# The license guard's check() while the server is unreachable (a port nothing listens on: the
# connection is refused at once), deciding from the stored signed answer: the sealed record opened
# (HKDF, AES-GCM), the answer verified again (Ed25519) and judged, as on every offline check.
sys.path.insert(0, str(Path(__file__).parent))
from tests.test_vectors import MemoryStorage, sealed_record, unreachable_url  # noqa: E402

guard_vector = next(v for v in vectors["guard"] if v["name"] == "no-check-in-grace")
guard_options = guard_vector["options"]
guard_now = datetime.fromisoformat(guard_options["now"].replace("Z", "+00:00"))
guard_storage = MemoryStorage()
guard_storage.set(
    f"keyturn-guard:{guard_options['productId']}",
    sealed_record(guard_vector["proof"], guard_options["licenseKey"], None),
)
guard = keyturn.LicenseGuard(
    client=keyturn.Client(unreachable_url(), "kt_client_benchmark", max_retries=0),
    license_key=guard_options["licenseKey"],
    product_id=guard_options["productId"],
    public_key=pem,
    storage=guard_storage,
    now=lambda: guard_now,
)
assert guard.check().state == "grace"
guard_rounds = [(rate(guard.check, 0.3), rate(bare, 0.3)) for _ in range(5)]
best_guard, best_guard_bare = (max(r[i] for r in guard_rounds) for i in range(2))
print(
    f"LicenseGuard.check() offline: {best_guard:,.0f}/s ({best_guard / best_guard_bare:.0%} of a bare Ed25519 verify, "
    f"{1e6 / best_guard:,.0f} µs a check, the refused connection included)"
)
