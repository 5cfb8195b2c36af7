"""Standard output closed by its reader (``vocencebench decide FILE | head -1`` once ``head``
has gone): the command ends quietly with status 141 (128 + SIGPIPE, docs/cli.md's exit-status
table), never a ``BrokenPipeError`` traceback with status 1 — which, for ``cache check``, is
the status of a damaged cache.

Deterministic: the pipe's read end is closed before the command starts, so its first write
(at the latest the flush when the command returns) finds no reader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_paths import ROOT, SRC

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX pipes")

SAMPLE = str(ROOT / "examples" / "sample_scores.jsonl")
SKIPPED = ("vocencebench: CANARIES SKIPPED (--skip-canaries): the probes and the judge are not "
           "checked against known answers")


def _env(*, unbuffered: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    if unbuffered:  # every print is a write: the error comes from the first one
        env["PYTHONUNBUFFERED"] = "1"
    return env


def _into_a_closed_pipe(argv: list[str], *, code: str | None = None,
                        unbuffered: bool = False) -> tuple[int, str]:
    """(status, standard error) of ``python -m vocencebench ARGV`` (or of ``python -c CODE
    ARGV``) whose standard output is a pipe nobody reads; ``unbuffered``: with
    ``PYTHONUNBUFFERED`` set (else buffered, as a pipe is by default: the error then comes
    from a flush)."""
    head = [sys.executable, "-m", "vocencebench"] if code is None else [sys.executable, "-c",
                                                                         code]
    env = _env(unbuffered=unbuffered)
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([*head, *argv], stdout=write, stderr=subprocess.PIPE, text=True,
                              env=env, timeout=600)
    finally:
        os.close(write)
    return done.returncode, done.stderr


@pytest.mark.parametrize("argv", [
    ["decide", SAMPLE],
    ["decide", SAMPLE, "--json"],
    ["corpus", "stats", "benchmark_v1"],
    ["corpus", "hash", "benchmark_v1"],
    ["--help"],
    ["decide", "--help"],
], ids=lambda argv: " ".join(Path(a).name for a in argv))
@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
def test_a_closed_pipe_is_a_quiet_141(argv: list[str], unbuffered: bool) -> None:
    rc, err = _into_a_closed_pipe(argv, unbuffered=unbuffered)
    assert (rc, err) == (141, ""), err


def test_cache_check_into_a_closed_pipe_is_not_a_damaged_cache(tmp_path: Path) -> None:
    from vocencebench.cache import Cache

    cache = tmp_path / "cache.sqlite"
    Cache(cache).close()
    for unbuffered in (False, True):
        rc, err = _into_a_closed_pipe(["cache", "check", str(cache)], unbuffered=unbuffered)
        assert (rc, err) == (141, ""), err  # 1 would say "damaged"


def test_a_run_into_a_closed_pipe_saves_everything_then_ends_quietly(tmp_path: Path) -> None:
    out = tmp_path / "run"
    rc, err = _into_a_closed_pipe(["run", "--system-a", "espeak-flat", "--system-b",
                                   "espeak-follow", "--limit", "2", "--quiet",
                                   "--skip-canaries", "--out", str(out)])
    assert (rc, err.splitlines()) == (141, [SKIPPED]), err
    # The run directory is saved before the summary is printed: the set is complete.
    assert {"run.json", "scores.jsonl", "report.md", "report.html"} <= {
        p.name for p in out.iterdir()}
    rc, err = _into_a_closed_pipe(["report", str(out)])
    assert (rc, err) == (141, ""), err
    done = subprocess.run([sys.executable, "-m", "vocencebench", "decide",
                           str(out / "scores.jsonl")], capture_output=True, text=True,
                          env=_env(unbuffered=False))
    assert done.returncode == 0 and "verdict:" in done.stdout, done.stderr


# A command that fails with a BrokenPipeError of its own (a pipe to a helper process, say)
# while standard output is sound: a failure like any other, not a quiet exit.
_OTHER_PIPE = """
import sys
import vocencebench.commands.decide as decide

def run(args):
    print("some output")
    raise BrokenPipeError(32, "a helper's pipe")

decide.run = run
from vocencebench.cli import main
sys.exit(main())
"""


def test_a_broken_pipe_elsewhere_is_not_taken_for_a_closed_output() -> None:
    done = subprocess.run([sys.executable, "-c", _OTHER_PIPE, "decide", SAMPLE],
                          capture_output=True, text=True, env=_env(unbuffered=False),
                          timeout=600)
    assert done.returncode == 1 and "BrokenPipeError: [Errno 32] a helper's pipe" in \
        done.stderr, done.stderr
    assert done.stdout == "some output\n"
    # With standard output closed too, the same error is the quiet exit.
    rc, err = _into_a_closed_pipe(["decide", SAMPLE], code=_OTHER_PIPE)
    assert (rc, err) == (141, ""), err


def test_the_status_is_documented() -> None:
    import vocencebench.cli as cli

    assert cli.EXIT_BROKEN_PIPE == 141
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = page.split("## Exit status", 1)[1]
    assert "| 141 |" in table and "`EXIT_BROKEN_PIPE`" in table
