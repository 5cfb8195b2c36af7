"""Guard for command systems: ``python -I -S _cmdguard.py LIFELINE_FD -- ARGV...``.

:class:`vocencebench.adapters.CommandAdapter` starts this file (built-in modules only, so it
starts as fast as Python can) as the leader of a new session and process group; it runs the
command in that group and waits for it. ``LIFELINE_FD`` is the read end of a pipe whose
write end only the calling process holds: when the caller goes away — even by SIGKILL — the
pipe reaches end-of-file and the guard kills its whole group, grandchildren included. On a
timeout the caller kills the group itself. SIGTERM, SIGHUP and SIGINT sent to the guard kill
the group too. The guard exits with the command's status (a command killed by signal N ends
the guard by signal N).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from types import FrameType

_STOP = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _kill_group(signum: int = 0, frame: FrameType | None = None) -> None:
    os.killpg(0, signal.SIGKILL)  # the guard is in the group too
    os._exit(128 + signal.SIGKILL)  # pragma: no cover - not reached


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: _cmdguard.py LIFELINE_FD -- ARGV...\n")
        return 2
    lifeline, cmd = int(argv[0]), argv[2:]
    if os.getpgrp() != os.getpid():  # not started as a group leader: become one, so that
        os.setsid()  # killing "our group" never reaches the caller's
    for sig in _STOP:
        signal.signal(sig, _kill_group)
    # SIGCHLD wakes the select below through this pipe (no polling, no lost wake-ups).
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    pid = os.fork()
    if pid == 0:
        for sig in (*_STOP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        os.close(lifeline)
        try:
            os.execvp(cmd[0], cmd)
        except OSError as exc:
            os.write(2, f"cannot run {cmd[0]}: {exc.strerror or exc}\n".encode())
        os._exit(127)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        ready, _, _ = select.select([lifeline, wake_r], [], [])
        if lifeline in ready and not os.read(lifeline, 1):
            _kill_group()  # the caller is gone
        if wake_r in ready:
            os.read(wake_r, 512)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # end the same way, so the caller sees the signal
        with contextlib.suppress(OSError, ValueError):  # SIGKILL keeps its default anyway
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
