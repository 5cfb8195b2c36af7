"""A ``cmd:`` system's background children do not outlive the command (issue 25, defect 2).

The audit's case: ``sh -c '(sleep 4711 >/dev/null 2>&1 &); cp "$CLIP" "$1"'`` ends rc 0 with
the ``sleep`` still alive, in the command's process group, because the group was killed only
on a timeout, an interrupt or the run's death. The same with ``nohup … &``, and with
``setsid … &`` (a new session: out of the group, caught by the guard as child subreaper on
Linux). Every sleeper gets a duration no other process uses, so the test finds exactly its
own leftovers in /proc."""

from __future__ import annotations

import contextlib
import os
import random
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from judge_fakes import tone_wav
from proc_tools import alive, cmdline, wait_gone
from repo_paths import SRC
from vocencebench.adapters import CommandAdapter

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="reads the process tree from /proc"),
              pytest.mark.signals]


def _sleepers(seconds: str) -> set[int]:
    """Live processes whose command line is ``sleep SECONDS``."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and cmdline(int(entry)).split() == ["sleep", seconds] \
                and alive(int(entry)):
            found.add(int(entry))
    return found


def _reap(pids: set[int]) -> None:
    for p in pids:  # never leave a leak behind for the next test
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def _unique_seconds() -> str:
    return str(4711 + random.SystemRandom().randrange(1, 10**6))


_FORMS = {
    "subshell": "(sleep {s} >/dev/null 2>&1 &)",
    "nohup": "nohup sleep {s} >/dev/null 2>&1 &",
    "setsid": "setsid sleep {s} >/dev/null 2>&1 &",
    "setsid-grandchild": "(setsid sh -c 'sleep {s} & wait' >/dev/null 2>&1 &)",
}


@pytest.mark.parametrize("form", sorted(_FORMS))
def test_a_background_child_dies_when_the_command_exits(tmp_path: Path, form: str) -> None:
    if form.startswith("setsid") and not sys.platform.startswith("linux"):
        pytest.skip("setsid escapers are caught by the Linux child subreaper only")
    seconds = _unique_seconds()
    clip = tmp_path / "tone.wav"
    clip.write_bytes(tone_wav(200.0))
    script = f"{_FORMS[form].format(s=seconds)}\nsleep 0.2; cp {shlex.quote(str(clip))} \"$1\""
    adapter = CommandAdapter(f"sh -c {shlex.quote(script)} sh {{out}}", timeout=60)
    try:
        assert adapter("hello", "calm")[:4] == b"RIFF"  # the command itself succeeded
        left = wait_gone(_sleepers(seconds), None, 5.0) | _sleepers(seconds)
        assert not left, [cmdline(p) for p in left]
    finally:
        _reap(_sleepers(seconds))


def test_a_command_that_exits_with_an_error_still_takes_its_children(tmp_path: Path) -> None:
    from vocencebench.errors import SynthesisError

    seconds = _unique_seconds()
    adapter = CommandAdapter(f"sh -c {shlex.quote(f'(sleep {seconds} &); exit 4')} {{out}}")
    try:
        with pytest.raises(SynthesisError, match="exited 4"):
            adapter("hello", "calm")
        left = wait_gone(_sleepers(seconds), None, 5.0) | _sleepers(seconds)
        assert not left, [cmdline(p) for p in left]
    finally:
        _reap(_sleepers(seconds))


@pytest.mark.slow
def test_no_daemon_of_a_cmd_system_outlives_a_normal_cli_run(tmp_path: Path) -> None:
    """The audit's command line, through the real CLI: rc 0, and no ``sleep`` left."""
    seconds = _unique_seconds()
    clip = tmp_path / "tone.wav"
    clip.write_bytes(tone_wav(200.0, seconds=1.5))
    system = ("cmd:sh -c '(sleep " + seconds + " >/dev/null 2>&1 &); "
              "nohup sleep " + seconds + " >/dev/null 2>&1 & cp \"$CLIP\" \"$1\"' sh {out}")
    env = {**os.environ, "PYTHONPATH": str(SRC), "CLIP": str(clip)}
    try:
        res = subprocess.run(
            [sys.executable, "-m", "vocencebench", "run", "--system-a", "espeak-flat",
             "--system-b", system, "--label-b", "daemonic", "--limit", "2", "--workers", "1",
             "--skip-canaries", "--out", str(tmp_path / "run"), "--quiet"],
            env=env, capture_output=True, text=True, timeout=300, check=False)
        assert res.returncode == 0, res.stderr[-2000:]
        assert "DECISION:" in res.stdout
        left = wait_gone(_sleepers(seconds), None, 5.0) | _sleepers(seconds)
        assert not left, [cmdline(p) for p in left]
    finally:
        _reap(_sleepers(seconds))


def test_a_timed_out_command_takes_its_setsid_child_along(tmp_path: Path) -> None:
    from vocencebench.errors import SynthesisError

    seconds = _unique_seconds()
    script = f"setsid sleep {seconds} >/dev/null 2>&1 &\nsleep 300"
    adapter = CommandAdapter(f"sh -c {shlex.quote(script)} {{out}}", timeout=1)
    try:
        with pytest.raises(SynthesisError, match="timed out after 1 s"):
            adapter("hello", "calm")
        left = wait_gone(_sleepers(seconds), None, 5.0) | _sleepers(seconds)
        assert not left, [cmdline(p) for p in left]
    finally:
        _reap(_sleepers(seconds))
