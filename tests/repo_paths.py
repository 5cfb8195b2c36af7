"""Where things are, for tests at any depth below tests/ (importable: tests/ is on pytest's
``pythonpath``): the repository root, its ``src``, this folder and its ``data``."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SRC = ROOT / "src"
DATA = TESTS / "data"
DOCS = ROOT / "docs"
