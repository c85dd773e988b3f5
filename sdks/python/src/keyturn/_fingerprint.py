"""A machine fingerprint: HMAC-SHA256 keyed by an application's salt over the machine's id, in
lowercase hex. The salt keeps the raw machine id private and differs per application."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
from typing import Optional


def machine_id() -> str:
    """This machine's stable id: ``/etc/machine-id`` (Linux), ``IOPlatformUUID`` (macOS),
    ``MachineGuid`` (Windows). Raises OSError when none can be read."""
    if sys.platform == "darwin":
        output = subprocess.run(
            ["ioreg", "-rd1", "-c", "IOPlatformExpertDevice"], capture_output=True, text=True, check=True, timeout=10
        ).stdout
        for line in output.splitlines():
            if "IOPlatformUUID" in line:
                return line.split("=", 1)[1].strip().strip('"')
        raise OSError("IOPlatformUUID not found")
    if sys.platform == "win32":
        import winreg

        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"SOFTWARE\Microsoft\Cryptography") as key:
            value, _ = winreg.QueryValueEx(key, "MachineGuid")
            return str(value)
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(path, encoding="ascii") as file:
                text = file.read().strip()
            if text:
                return text
        except OSError:
            continue
    raise OSError("no machine id found (/etc/machine-id)")


def machine_fingerprint(salt: str, machine: Optional[str] = None) -> str:
    """HMAC-SHA256(salt, machine id) in lowercase hex; ``machine`` defaults to :func:`machine_id`."""
    identifier = machine if machine is not None else machine_id()
    return hmac.new(salt.encode("utf-8"), identifier.encode("utf-8"), hashlib.sha256).hexdigest()
