"""Where the license guard keeps its last good proof: a small key-value store. ``FileStorage`` keeps
each value in its own file in a per-user data folder, written atomically and readable only by the
user."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Optional, Protocol, Union

#: Stored values larger than this are not read (a proof is a few kilobytes).
MAX_STORED_LENGTH = 256 * 1024


class GuardStorage(Protocol):
    """What the license guard needs of a store; values are opaque strings."""

    def get(self, key: str) -> Optional[str]: ...

    def set(self, key: str, value: str) -> None: ...

    def delete(self, key: str) -> None: ...


def user_data_directory() -> Path:
    """The per-user data folder: ``%APPDATA%`` (Windows), ``~/Library/Application Support`` (macOS),
    ``$XDG_DATA_HOME`` or ``~/.local/share`` (elsewhere)."""
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        return Path(appdata) if appdata else Path.home() / "AppData" / "Roaming"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    xdg = os.environ.get("XDG_DATA_HOME")
    # The XDG rules: a relative path is invalid and ignored.
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"


class FileStorage:
    """One file per key in ``directory`` (default: ``keyturn`` in :func:`user_data_directory`),
    created readable only by this user (0700 folder, 0600 files). A write goes to a temporary file
    in the same folder, flushed to disk, then renamed over the old one: a reader sees the old value
    or the new one, never half of one."""

    def __init__(self, directory: Optional[Union[str, "os.PathLike[str]"]] = None) -> None:
        self.directory = Path(directory) if directory is not None else user_data_directory() / "keyturn"

    def path(self, key: str) -> Path:
        """The file of ``key``: named by the first 32 hex digits of its SHA-256, so any key makes a
        safe file name and the name says nothing about the license."""
        if not isinstance(key, str) or key == "":
            raise ValueError("a storage key is a non-empty string")
        return self.directory / f"{hashlib.sha256(key.encode('utf-8')).hexdigest()[:32]}.store"

    def get(self, key: str) -> Optional[str]:
        path = self.path(key)
        try:
            with open(path, "rb") as file:
                data = file.read(MAX_STORED_LENGTH + 1)
        except FileNotFoundError:
            return None
        if len(data) > MAX_STORED_LENGTH:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def set(self, key: str, value: str) -> None:
        path = self.path(key)
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=self.directory)
        try:
            # mkstemp creates the file 0600 already; chmod in case a umask or platform differs.
            os.chmod(temporary, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                file.write(value.encode("utf-8"))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
            raise

    def delete(self, key: str) -> None:
        try:
            os.unlink(self.path(key))
        except FileNotFoundError:
            pass
