"""Process-tree helpers for the hygiene tests (Linux /proc; no psutil)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

#: A transcriber that takes a second per clip, as the source of a module of its own
#: (``slowasr.py``, class ``SlowASR``) so that forkserver workers can import it: it keeps an
#: analysis pool busy long enough to be interrupted or killed in the middle.
SLOW_ASR_MODULE = """
import time
from vocencebench.transcribe import Transcript


class SlowASR:
    engine = "slow-asr@1"

    def __call__(self, wav):
        time.sleep(1.0)
        return Transcript("hello", self.engine)
"""


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, session id) of ``pid``, or None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[3])


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as dead)."""
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def _all() -> dict[int, tuple[str, int, int]]:
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None:
                out[int(entry)] = st
    return out


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` in the process tree."""
    table = _all()
    children: dict[int, list[int]] = {}
    for p, (_, ppid, _) in table.items():
        children.setdefault(ppid, []).append(p)
    out: set[int] = set()
    todo = [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out and table[c][0] not in ("Z", "X"):
                out.add(c)
                todo.append(c)
    return out


def session(sid: int) -> set[int]:
    """Every live process of session ``sid`` (a run started with ``start_new_session``)."""
    return {p for p, (state, _, s) in _all().items() if s == sid and state not in ("Z", "X")}


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_gone(pids: set[int], sid: int | None, deadline_s: float) -> set[int]:
    """Poll until none of ``pids`` (and nothing in session ``sid``) is alive, or the deadline;
    return what is still alive."""
    end = time.monotonic() + deadline_s
    while True:
        left = {p for p in pids if alive(p)} | (session(sid) if sid is not None else set())
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def as_in_a_terminal() -> None:
    """``preexec_fn`` of a child a test interrupts: the default SIGINT and SIGHUP
    dispositions.

    A test runner started in the background of a non-interactive shell (`make test &`, a CI
    step) inherits SIGINT ignored, and one started under ``nohup`` SIGHUP ignored; Python
    (the CLI too) keeps an ignored SIGINT or SIGHUP ignored: the child would never see the
    Ctrl-C or hang-up the test sends. A terminal's foreground job has the default
    dispositions."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
