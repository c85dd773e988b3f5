"""Where the shared conformance material is, and the live scenario's server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict

REPOSITORY = Path(__file__).resolve().parents[3]
CONFORMANCE = Path(os.environ.get("KEYTURN_CONFORMANCE_DIR", REPOSITORY / "conformance"))


def load_vectors() -> Dict[str, Any]:
    with open(CONFORMANCE / "vectors.json", encoding="utf-8") as file:
        vectors: Dict[str, Any] = json.load(file)
    return vectors


class ScenarioServer:
    """``node conformance/serve.mjs``: a throwaway ``keyturn serve``; its first stdout line is the scenario."""

    def __init__(self) -> None:
        node = os.environ.get("KEYTURN_NODE", shutil.which("node") or "node")
        self.process = subprocess.Popen(
            [node, str(CONFORMANCE / "serve.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            _, errors = self.process.communicate(timeout=30)
            raise RuntimeError(f"conformance/serve.mjs did not start: {errors}")
        self.scenario: Dict[str, Any] = json.loads(line)

    def stop(self) -> None:
        # Closing stdin stops the server and deletes its database.
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
