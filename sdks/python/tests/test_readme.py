"""The README's Python compiles, and every ``keyturn.name`` it uses exists."""

from __future__ import annotations

import re
import unittest
from pathlib import Path

import keyturn

README = Path(__file__).resolve().parents[1] / "README.md"


class Readme(unittest.TestCase):
    def test_the_quick_start_compiles_against_the_package(self) -> None:
        blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
        self.assertGreater(len(blocks), 0)
        for block in blocks:
            compile(block, str(README), "exec")
            for name in re.findall(r"\bkeyturn\.(\w+)", block):
                self.assertTrue(hasattr(keyturn, name), f"keyturn.{name} does not exist")


if __name__ == "__main__":
    unittest.main()
