"""Process hygiene: every process a run starts dies with the process that started it.

Three mechanisms, used together:

* ``PR_SET_PDEATHSIG`` (Linux, through ``prctl``): the kernel sends the child a signal the
  moment its parent exits, even on SIGKILL. It fires when the *thread* that forked the child
  ends, so children are only started from threads that outlive them (the caller's thread
  runs the pool and closes it), and the setting does not survive ``fork``: each generation
  sets its own.
* A parent watch (every platform): a daemon thread polls whether the run's main process is
  still alive and ends this process when it is not. Pool workers use it because their parent
  is the forkserver, which outlives the main process; once the workers are gone, the
  forkserver and the resource tracker see their pipes close and exit by themselves.
* Process groups: command systems run in a session of their own, under a small guard
  (:mod:`vocencebench.systems._cmdguard`) that kills the whole group when the run dies, so a
  grandchild cannot outlive it either.

Workers also ignore SIGINT: Ctrl-C goes to the whole terminal process group, and only the
main process should react (stop, keep the cache, print one line), not every worker with a
traceback of its own.

On macOS and other systems without ``prctl`` only the parent watch applies (a worker notices
within :data:`WATCH_INTERVAL_S`); the eSpeak clip processes then finish their one clip and
exit. Windows is not supported by the eSpeak systems; command systems there run without the
guard and are killed on timeout only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType

__all__ = ["WATCH_INTERVAL_S", "die_with_parent", "pid_alive", "process_start",
           "set_parent_death_signal", "sigterm_as_interrupt", "usable_cpus", "watch_process",
           "worker_init", "worker_initargs"]

def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; all of them off Linux), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: Seconds between two checks of the parent watch.
WATCH_INTERVAL_S = 0.25

_PR_SET_PDEATHSIG = 1
_libc: ctypes.CDLL | None = None


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent exits (Linux only).

    Returns False where that is not available; the caller then relies on a parent watch.
    """
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)  # this process: libc is in it
        return int(_libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # pragma: no cover - exotic libc
        return False


def _linux_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks) from /proc, None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return fields[0], fields[19]


def pid_alive(pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` is running. On Linux a zombie counts as dead, and with
    ``started`` (its start time, from :func:`process_start`) a reused pid does too."""
    if sys.platform.startswith("linux") and os.path.isdir("/proc/self"):
        st = _linux_stat(pid)
        if st is None or st[0] in ("Z", "X", "x"):
            return False
        return started is None or st[1] == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def process_start(pid: int) -> str | None:
    """An identity of ``pid``'s start (Linux: start time in clock ticks), or None."""
    st = _linux_stat(pid) if sys.platform.startswith("linux") else None
    return None if st is None else st[1]


def die_with_parent(parent_pid: int, sig: int = signal.SIGKILL) -> bool:
    """Set the parent-death signal, then close the race in which the parent died before that:
    if ``os.getppid()`` is no longer ``parent_pid`` this process exits at once. Returns
    whether the kernel will deliver the signal (False off Linux)."""
    armed = set_parent_death_signal(sig)
    if os.getppid() != parent_pid:
        os._exit(1)
    return armed


def _watch(pid: int, started: str | None, interval: float) -> None:
    while pid_alive(pid, started):
        time.sleep(interval)
    os._exit(1)


def watch_process(pid: int, started: str | None = None,
                  interval: float = WATCH_INTERVAL_S) -> threading.Thread:
    """A daemon thread that ends this process (``os._exit``) once ``pid`` is gone."""
    t = threading.Thread(target=_watch, args=(pid, started, interval),
                         name="vocencebench-parent-watch", daemon=True)
    t.start()
    return t


def worker_init(main_pid: int, main_started: str | None = None) -> None:
    """Initializer of pool workers: ignore Ctrl-C, die with the parent (forkserver or main
    process) and with the run's main process ``main_pid`` (started at ``main_started``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_parent_death_signal(signal.SIGKILL)
    if not pid_alive(main_pid, main_started):
        os._exit(1)
    watch_process(main_pid, main_started)


def worker_initargs() -> tuple[int, str | None]:
    """The ``initargs`` of :func:`worker_init` for pools started by this process."""
    pid = os.getpid()
    return pid, process_start(pid)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM stops the main thread like Ctrl-C (``KeyboardInterrupt``).

    A run ended by ``kill`` or a job scheduler then cleans up as after Ctrl-C: workers and
    eSpeak templates are stopped at once, the cache (which commits every finished unit) is
    left consistent, and the CLI prints its one line. Outside the main thread it does nothing
    (signal handlers belong to the main thread). Without it SIGTERM ends the process at once;
    every child still dies with it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
