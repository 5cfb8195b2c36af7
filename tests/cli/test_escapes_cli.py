"""The audit's escape-sequence case through the real CLI (issue 25, defect 5): a ``cmd:``
system that exits 1 with ``\\e]0;PWNED\\a\\e[2J`` on stderr, and a label with ESC in it. No
raw ESC or BEL may reach standard output, standard error, report.md or report.html; the
sequence is shown escaped (``\\x1b]0;PWNED\\x07``) where the failure is reported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import SRC


@pytest.mark.slow
def test_escape_sequences_from_a_system_and_a_label_are_shown_not_obeyed(
        tmp_path: Path) -> None:
    out = tmp_path / "run"
    system = "cmd:sh -c 'printf \"\\033]0;PWNED\\007\\033[2J\" >&2; exit 1' {out}"
    res = subprocess.run(
        [sys.executable, "-m", "vocencebench", "run", "--system-a", "espeak-flat",
         "--system-b", system, "--label-b", "evil\x1b[31m", "--limit", "2", "--workers", "1",
         "--skip-canaries", "--out", str(out)],
        env={**os.environ, "PYTHONPATH": str(SRC)}, capture_output=True, timeout=300,
        check=False)
    assert res.returncode == 0, res.stderr[-2000:]
    blobs = {"stdout": res.stdout, "stderr": res.stderr,
             "report.md": (out / "report.md").read_bytes(),
             "report.html": (out / "report.html").read_bytes()}
    raw = {where: sorted({chr(b) for b in data if b in (0x1b, 0x07, 0x9b)})
           for where, data in blobs.items()}
    assert raw == {where: [] for where in blobs}, raw
    for where in ("stdout", "report.html"):
        assert b"\\x1b]0;PWNED\\x07\\x1b[2J" in blobs[where], where
    assert b"\\x1b\\]0;PWNED\\x07\\x1b\\[2J" in blobs["report.md"]  # brackets: no links
