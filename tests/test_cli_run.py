"""``vocencebench run`` end to end against broken instruments: an INCOMPLETE run names no
winner, exits 3, says what failed in every output, and a rerun resumes it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vocencebench.cli import EXIT_INCOMPLETE


def _dead_port() -> int:
    with socket.socket() as s:  # bound and closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vocencebench", *args], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ), check=False)


@pytest.mark.slow
@pytest.mark.parametrize("canaries", [True, False])
def test_a_judge_on_a_dead_port_ends_incomplete_quickly_and_names_no_winner(
    tmp_path: Path, canaries: bool
) -> None:
    out = tmp_path / "run"
    args = ["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow",
            "--judge", f"local:http://127.0.0.1:{_dead_port()}#omni", "--limit", "3",
            "--workers", "1", "--out", str(out), "--quiet",
            *([] if canaries else ["--skip-canaries"])]
    t0 = time.monotonic()
    res = _run(args)
    elapsed = time.monotonic() - t0
    assert res.returncode == EXIT_INCOMPLETE, res.stderr[-2000:]
    # The bound is 30 s for the whole command (interpreter, corpus, 6 eSpeak clips);
    # measured at about 5 s here. A never-answering service fails fast, it is not retried.
    assert elapsed < 30, elapsed
    assert "DECISION: INCOMPLETE — no winner" in res.stdout
    assert " wins" not in res.stdout.split("DECISION:")[1]
    assert "INCOMPLETE: no winner is named" in res.stderr
    run = json.loads((out / "run.json").read_text())
    assert run["decision"]["winner"] == "incomplete"
    rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    # With canaries the judge fails its known-answer checks before any item is synthesised;
    # without, the first judge call fails fatally and every unfinished item stops.
    prefix = "canaries: " if canaries else "judge: "
    assert rows and all(r["S"] is None and r["incomplete"].startswith(prefix) for r in rows)
    assert "cannot be reached" in rows[0]["incomplete"] or "connect" in rows[0]["incomplete"]
    md = (out / "report.md").read_text()
    assert "INCOMPLETE: 3 of 3 items could not be scored" in md and "## Failures" in md
    # The published scores cannot be decided as they are.
    assert _run(["decide", str(out / "scores.jsonl")]).returncode == 2
