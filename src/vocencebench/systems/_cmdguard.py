"""Guard for command systems: ``python -I -S _cmdguard.py LIFELINE_FD -- ARGV...``.

:class:`vocencebench.adapters.CommandAdapter` starts this file (standard-library modules
only, so it starts as fast as Python can) as the leader of a new session and process group;
it runs the command in that group and waits for it. Nothing the command starts may outlive
it:

* **When the command exits** (any status), every process it left behind is killed before the
  guard exits with the command's status: a background child (``cmd &``, ``(cmd &)``,
  ``nohup cmd &``) and everything below it. On Linux the guard is a *child subreaper*
  (``PR_SET_CHILD_SUBREAPER``): an orphaned descendant is re-parented to the guard instead of
  to init, even one that left the group and the session with ``setsid``, so the guard kills
  its children, then the orphans that their deaths hand over, until it has no child left —
  and with a subreaper, no child means no descendant. The caller then kills the group once
  more before it reaps the guard (:mod:`vocencebench.systems.command`), which catches
  whatever is still in the group on systems without a subreaper.
* **When the caller goes away** — even by SIGKILL: ``LIFELINE_FD`` is the read end of a pipe
  whose write end only the calling process holds; at end-of-file the guard kills everything
  as above and then its whole group.
* **On SIGTERM, SIGHUP or SIGINT** (the caller's timeout and interrupt send SIGTERM): the
  same.

* **Its stderr is bounded**: the command writes into a pipe that the guard drains as it
  runs, keeping only the last :data:`STDERR_KEEP_BYTES`, which it writes to its own stderr
  (the caller's file) once the command is over. A command that floods stderr fills no disk.

The guard exits with the command's status (a command killed by signal N ends the guard by
signal N). What no guard can stop: a process that is no descendant (a command that asks
another service — ``systemd-run``, ``at``, a container daemon, ``ssh`` — to start one), and,
off Linux, a descendant that calls ``setsid`` (docs/adapters.md, "Process hygiene").
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from types import FrameType

_STOP = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_PR_SET_CHILD_SUBREAPER = 36
#: Rounds of "kill every child, reap" before giving up on a descendant that keeps forking.
_MAX_ROUNDS = 10_000
#: Seconds a round waits for a killed child to be reaped before looking again.
_ROUND_S = 0.002
#: Bytes of the end of the command's stderr that are kept (the caller shows its last lines).
STDERR_KEEP_BYTES = 65_536

_subreaper = False


def _become_subreaper() -> bool:
    """Adopt this process's orphaned descendants (Linux ≥ 3.4); False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0,
                                                           0)) == 0
    except (OSError, AttributeError, ImportError):  # pragma: no cover - exotic libc
        return False


def _children() -> list[int]:
    """The live children of this process (which, as a subreaper, are all that is left of
    its descendants' tops). Reads /proc; the per-thread ``children`` file when the kernel
    has it, else every process's ``stat``."""
    me = os.getpid()
    with contextlib.suppress(OSError, ValueError), \
            open(f"/proc/{me}/task/{me}/children", "rb") as f:
        return [int(p) for p in f.read().split()]
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        fields = raw[raw.rindex(b")") + 2:].split()
        if int(fields[1]) == me:
            found.append(int(entry))
    return found


def _reap() -> bool:
    """Reap every child that has ended; False once this process has no child at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _end_descendants() -> None:
    """Kill every descendant left (subreaper only), until this process has no child."""
    if not _subreaper:
        return
    for _ in range(_MAX_ROUNDS):
        if not _reap():
            return  # no child, and so (as a subreaper) no descendant
        for pid in _children():
            # A child is ours until we reap it, so its pid cannot have been reused.
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(_ROUND_S)


def _kill_group(signum: int = 0, frame: FrameType | None = None) -> None:
    _end_descendants()
    os.killpg(0, signal.SIGKILL)  # the rest of the group, the guard too
    os._exit(128 + signal.SIGKILL)  # pragma: no cover - not reached


class _Tail:
    """The last :data:`STDERR_KEEP_BYTES` of what the command writes to the pipe ``fd``."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd
        self.kept = bytearray()

    def fds(self) -> list[int]:
        return [] if self.fd is None else [self.fd]

    def read(self) -> bool:
        """Take what the pipe holds now; False when nothing more can come (or nothing is
        there without waiting)."""
        if self.fd is None:
            return False
        try:
            chunk = os.read(self.fd, 65_536)
        except BlockingIOError:
            return False
        if not chunk:  # every writer has closed it
            os.close(self.fd)
            self.fd = None
            return False
        self.kept += chunk
        if len(self.kept) > 2 * STDERR_KEEP_BYTES:
            del self.kept[:-STDERR_KEEP_BYTES]
        return True

    def finish(self) -> None:
        """Drain what is left without waiting (a process that escaped the guard may hold
        the pipe open) and write the kept end to this process's stderr."""
        if self.fd is not None:
            os.set_blocking(self.fd, False)
            while self.read():
                pass
        data = bytes(self.kept[-STDERR_KEEP_BYTES:])
        while data:
            try:
                data = data[os.write(2, data):]
            except OSError:  # pragma: no cover - nowhere to write it
                return


def main(argv: list[str]) -> int:
    global _subreaper
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: _cmdguard.py LIFELINE_FD -- ARGV...\n")
        return 2
    lifeline, cmd = int(argv[0]), argv[2:]
    if os.getpgrp() != os.getpid():  # not started as a group leader: become one, so that
        os.setsid()  # killing "our group" never reaches the caller's
    _subreaper = _become_subreaper()
    for sig in _STOP:
        signal.signal(sig, _kill_group)
    # SIGCHLD wakes the select below through this pipe (no polling, no lost wake-ups).
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        for sig in (*_STOP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        os.close(lifeline)
        os.dup2(err_w, 2)
        os.close(err_r)
        os.close(err_w)
        try:
            os.execvp(cmd[0], cmd)
        except OSError as exc:
            os.write(2, f"cannot run {cmd[0]}: {exc.strerror or exc}\n".encode())
        os._exit(127)
    os.close(err_w)
    tail = _Tail(err_r)
    status: int | None = None
    while status is None:
        # Reap whatever has ended (orphans handed to the subreaper too, so none lingers as
        # a zombie while the command runs); the command's own end stops the wait.
        while True:
            try:
                done, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:  # pragma: no cover - the command is a child until reaped
                break
            if done == 0:
                break
            if done == pid:
                status = st
        if status is not None:
            break
        ready, _, _ = select.select([lifeline, wake_r, *tail.fds()], [], [])
        if lifeline in ready and not os.read(lifeline, 1):
            _kill_group()  # the caller is gone
        if wake_r in ready:
            os.read(wake_r, 512)
        if err_r in ready:
            tail.read()
    # The command is over: nothing it started may outlive it.
    for sig in _STOP:  # from here the guard finishes its own clean-up
        signal.signal(sig, signal.SIG_IGN)
    _end_descendants()
    tail.finish()
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # end the same way, so the caller sees the signal
        with contextlib.suppress(OSError, ValueError):  # SIGKILL keeps its default anyway
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
