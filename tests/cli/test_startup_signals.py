"""Ctrl-C and SIGTERM at any point of the CLI's life: one line and exit status 130 (issue 25,
defect 1), from the first instruction of the entry point to the interpreter's exit.

The signal is sent at a *controlled* point, never after a guessed delay: a ``sitecustomize``
on the child's ``PYTHONPATH`` (test code, not the product's) installs an import hook that,
when the named module is about to be imported, announces it in a file and sleeps; the test
waits for the announcement and then sends the signal, so it lands inside that import every
time. The points run from the first import inside ``main()`` (``vocencebench.commands``)
through the command modules, numpy and sqlite3 (the heavy imports of the first second, where the
audit saw 26-53-line tracebacks and rc -2, or a silent rc -15 for SIGTERM) to an ``atexit``
callback after the command has finished. Both entry points are driven: ``python -m
vocencebench`` and the console script's own two lines (``from vocencebench.cli import main;
sys.exit(main())``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from proc_tools import as_in_a_terminal
from repo_paths import SRC

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="POSIX signals"),
              pytest.mark.signals]

LINE = ("vocencebench: interrupted; finished work is kept in the cache, run the same command "
        "to resume.")

# Imported by the child's interpreter at start-up (site.py): pause at one point and say so.
_SITECUSTOMIZE = '''
import atexit, os, sys, time

_point, _ready = os.environ["VB_PAUSE_AT"], os.environ["VB_PAUSE_READY"]


def _pause():
    with open(_ready, "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)


class _PauseAt:
    """A meta-path finder that finds nothing: it only stops the import of one module."""

    def find_spec(self, name, path=None, target=None):
        if name == _point:
            sys.meta_path.remove(self)
            _pause()
        return None


if _point == "atexit":
    atexit.register(_pause)  # registered first, so it runs last: after main() has returned
else:
    sys.meta_path.insert(0, _PauseAt())
'''

_CONSOLE_SCRIPT = "import sys\nfrom vocencebench.cli import main\nsys.exit(main())\n"



def _interrupt(tmp: Path, *, entry: str, point: str, how: str, argv: list[str]
               ) -> tuple[int, str]:
    site = tmp / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    ready = tmp / f"ready-{entry}-{point}-{how}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)]),
           "VB_PAUSE_AT": point, "VB_PAUSE_READY": str(ready)}
    head = ([sys.executable, "-m", "vocencebench"] if entry == "module"
            else [sys.executable, "-c", _CONSOLE_SCRIPT])
    err = tmp / f"stderr-{entry}-{point}-{how}.txt"
    with open(err, "wb") as f:
        proc = subprocess.Popen([*head, *argv], env=env, stdout=subprocess.DEVNULL, stderr=f,
                                start_new_session=True, preexec_fn=as_in_a_terminal)
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert proc.poll() is None, f"ended (rc {proc.returncode}) before {point}: " \
                                        + err.read_text()[-2000:]
            assert time.monotonic() < deadline, f"never reached {point}"
            time.sleep(0.01)
        if how == "ctrl-c":  # what Ctrl-C in a terminal does: SIGINT to the whole group
            os.killpg(proc.pid, signal.SIGINT)
        else:  # `kill PID`
            os.kill(proc.pid, signal.SIGTERM)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return rc, err.read_text()


_RUN = ["run", "--system-a", "espeak-flat", "--system-b", "espeak-follow", "--limit", "60",
        "--quiet"]


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
@pytest.mark.parametrize("point", ["vocencebench.commands", "argparse",
                                   "vocencebench.commands.run", "numpy", "sqlite3"])
@pytest.mark.parametrize("entry", ["module", "console-script"])
def test_a_signal_during_start_up_is_one_line_and_130(tmp_path: Path, entry: str, point: str,
                                                       how: str) -> None:
    rc, err = _interrupt(tmp_path, entry=entry, point=point, how=how,
                         argv=[*_RUN, "--out", str(tmp_path / "run")])
    assert (rc, err.splitlines()) == (130, [LINE]), err


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_a_signal_after_the_command_is_one_line_and_130(tmp_path: Path, how: str) -> None:
    # The command has finished (its output printed) and the interpreter is exiting.
    rc, err = _interrupt(tmp_path, entry="console-script", point="atexit", how=how,
                         argv=["decide", str(SRC.parent / "examples" / "sample_scores.jsonl")])
    assert (rc, err.splitlines()) == (130, [LINE]), err


def test_the_cli_module_imports_nothing_before_main() -> None:
    """The entry point module and the package import no module at all when loaded (so there
    is no import inside which a signal could land before ``main()`` installs its handlers)."""
    code = ("import sys; before = set(sys.modules); import vocencebench.cli; "
            "print(sorted(set(sys.modules) - before - {'vocencebench', 'vocencebench.cli'}))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(SRC)},
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
