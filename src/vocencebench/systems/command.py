"""Command-line systems: one command per item, in a process group of its own.

The command runs under a small guard script (``_cmdguard.py`` beside this file, started by
path as ``python -I -S``) that ends every process the command leaves behind when it exits,
and the whole group when the calling process dies; a timeout or an interrupted run stops the
group from here (:func:`kill_running_commands`), and after every command the group is killed
once more before the guard is reaped.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..errors import ConfigError, SynthesisError
from ..redact import redact
from .base import CLIP_MAX_BYTES, check_max_bytes, read_clip

__all__ = ["CommandAdapter", "kill_running_commands"]

_GUARD = str(Path(__file__).with_name("_cmdguard.py"))

# Command groups running now in this process. A command runs in a stage thread, which never
# sees the main thread's KeyboardInterrupt; without this the interrupted run would wait, at
# interpreter exit, for that thread and so for the command (the guard's lifeline only fires
# once this process is gone): Ctrl-C would hang until the command's timeout.
_running: set[tuple[subprocess.Popen[bytes], bool]] = set()
_running_lock = threading.Lock()


def kill_running_commands() -> int:
    """Kill the process group of every command system this process is running now (what an
    interrupted run does before it returns); their calls then fail. Returns how many."""
    with _running_lock:
        running = list(_running)
    for proc, grouped in running:
        _kill_group(proc, grouped)
    return len(running)


#: Most characters of standard error a failure reason quotes (its end: the error line is
#: usually last, after warnings and progress output).
STDERR_TAIL_CHARS = 200


def _stderr_tail(path: str, lines: int = 3) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
            tail = f.read()
    except OSError:
        return ""
    text = " | ".join(tail.decode("utf-8", "replace").strip().splitlines()[-lines:])
    # Failure reasons are cut to a few hundred characters from the front; a long warning
    # line before the error would push the error itself out.
    return text if len(text) <= STDERR_TAIL_CHARS else "…" + text[-STDERR_TAIL_CHARS:]


#: Seconds the guard gets, after SIGTERM (a timeout, an interrupt), to end the command and
#: everything below it before the caller kills the whole group itself.
GUARD_GRACE_S = 5.0


def _exited(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait until ``proc`` has exited, *without reaping it*, at most ``timeout`` seconds
    (None: no limit); False when it is still running.

    An exited but unreaped guard is a zombie whose pid — the id of the command's process
    group — the kernel cannot hand to another process, so the group can still be killed by
    that id safely. A pidfd becomes readable the moment the process exits (Linux ≥ 5.3, no
    polling); elsewhere ``waitid(WNOWAIT)`` is polled, and where even that is missing
    (macOS) the process is reaped by ``wait`` (the group id is then reserved only while the
    group has members).
    """
    pidfd_open = getattr(os, "pidfd_open", None)
    fd = None
    if pidfd_open is not None:
        with contextlib.suppress(OSError):
            fd = pidfd_open(proc.pid)
    if fd is not None:
        try:
            ready, _, _ = select.select([fd], [], [], timeout)
        finally:
            os.close(fd)
        return bool(ready)
    waitid = getattr(os, "waitid", None)
    if waitid is None:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    end = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            if waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped (by another thread's wait)
            return True
        if end is not None and time.monotonic() >= end:
            return False
        time.sleep(0.01)


def _reap(proc: subprocess.Popen[bytes], grouped: bool) -> int:
    """The guard has exited: kill whatever is still in its group (a background child of the
    command, on a system where the guard cannot adopt orphans), then reap the guard."""
    if grouped:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def _kill_group(proc: subprocess.Popen[bytes], grouped: bool) -> None:
    """Stop the command and everything it started: ask the guard (SIGTERM), which kills the
    command's descendants — those that left the group with ``setsid`` too, on Linux — and
    then its group; kill the group from here if the guard has not exited within
    :data:`GUARD_GRACE_S`; then reap."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        if grouped:
            os.kill(proc.pid, signal.SIGTERM)
            _exited(proc, GUARD_GRACE_S)
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)


# Programs that run their argument after these flags as code: a placeholder filled into that
# argument would let a script's quotes or $(...) run as commands.
_CODE_FLAGS = {"sh": "c", "bash": "c", "dash": "c", "zsh": "c", "ksh": "c", "mksh": "c",
               "ash": "c", "fish": "c", "csh": "c", "tcsh": "c", "python": "c", "perl": "e",
               "ruby": "e", "node": "e"}  # fmt: skip


def _code_flag(program: str) -> str | None:
    name = os.path.basename(program)
    return _CODE_FLAGS.get(re.sub(r"[0-9.]+$", "", name))


def _refuse_code_placeholders(argv: list[str], template: str) -> None:
    """ConfigError for ``sh -c '… {text} …'`` and the like: the text would be filled into
    code the shell (or interpreter) parses, the one way this adapter could run a script's
    ``$(…)``. The safe form passes the values as positional parameters."""
    for i, arg in enumerate(argv):
        flag = _code_flag(arg)
        if flag is None:
            continue
        # The interpreter's own options come before its script (or code); a "-c" after a
        # script file is the script's option.
        for j in range(i + 1, len(argv) - 1):
            opt = argv[j]
            if not opt.startswith("-"):
                break
            if not re.fullmatch(rf"-[a-zA-Z]*{flag}[a-zA-Z]*", opt):
                continue
            code = argv[j + 1]
            found = [p for p in ("{text}", "{instruction}") if p in code]
            if found:
                raise ConfigError(
                    f"command template {redact(template)!r} fills {found[0]} into the code "
                    f"that {os.path.basename(arg)} {opt} runs: a script with quotes or $(…) "
                    f"would run as commands. Pass it as an argument instead, e.g. "
                    f"sh -c 'mytts --text \"$1\" --wav \"$2\"' sh {{text}} {{out}}")
            break


class CommandAdapter:
    """Runs a command per item, without a shell: ``{text}``, ``{instruction}``, ``{out}``.

    The template is split with :func:`shlex.split` first and placeholders are filled per
    argument, so a script containing quotes or ``;`` is passed verbatim, never interpreted.
    The command must write a WAV file to ``{out}``. ``timeout`` is in seconds; ``max_bytes``
    caps the clip it writes (checked before reading; default :data:`CLIP_MAX_BYTES`).

    Process hygiene (POSIX): the command runs in a session and process group of its own under
    a small guard (:mod:`vocencebench.systems._cmdguard`). When the command exits — success
    or failure — every process it left behind is killed (``cmd &``, ``nohup cmd &``; on Linux
    also one that moved to a new session with ``setsid``, which the guard adopts as child
    subreaper), and the group is killed once more before the guard is reaped. On a timeout, or
    when the caller is interrupted, the same happens at once; when the calling process dies
    (even by SIGKILL) the guard kills the group. Its stdin is empty, its stdout discarded and
    only the last lines of its stderr kept for the failure reason. What escapes: a process
    that is not a descendant (one started for the command by another service), and off
    Linux a descendant that calls ``setsid``.
    """

    def __init__(self, template: str, *, timeout: float = 300.0, name: str | None = None,
                 max_bytes: int = CLIP_MAX_BYTES) -> None:
        try:
            self.argv_template = shlex.split(template)
        except ValueError as exc:  # an unbalanced quote
            raise ConfigError(f"cannot parse command template {template!r}: {exc}") from None
        if not self.argv_template:
            raise ConfigError("command template is empty")
        if not any("{out}" in a for a in self.argv_template):
            raise ConfigError(f"command template {template!r} must contain {{out}}")
        _refuse_code_placeholders(self.argv_template, template)
        self.timeout = timeout
        self.max_bytes = check_max_bytes(max_bytes)
        # The id is written into run.json, the reports and the cache: a key typed into the
        # template is masked there (the command itself still gets the template as written).
        self.system_id = name or f"cmd:{redact(template, limit=None)}"

    def __call__(self, text: str, instruction: str) -> bytes:
        with tempfile.TemporaryDirectory(prefix="vocence-cmd-") as tmp:
            out = os.path.join(tmp, "out.wav")
            values = {"text": text, "instruction": instruction, "out": out}
            argv = [_fill(a, values) for a in self.argv_template]
            if shutil.which(argv[0]) is None:
                raise SynthesisError(f"command not found: {argv[0]}")
            err_path = os.path.join(tmp, "stderr.txt")
            code = self._run(argv, err_path)
            if code != 0:
                raise SynthesisError(
                    f"command exited {code}: {argv[0]}: {_stderr_tail(err_path)}"
                )
            wav = read_clip(out, self.max_bytes, f"command {argv[0]}")
            if wav is None:
                raise SynthesisError(f"command {argv[0]} wrote no file to {{out}}")
            return wav

    def _run(self, argv: list[str], err_path: str) -> int:
        grouped = os.name == "posix" and bool(sys.executable)
        # The guard holds the read end of a lifeline pipe; only this process holds the
        # write end, so the guard sees end-of-file the moment this process dies.
        life_r, life_w = os.pipe() if grouped else (-1, -1)
        full = ([sys.executable, "-I", "-S", _GUARD, str(life_r), "--", *argv]
                if grouped else argv)
        try:
            with open(err_path, "wb") as err:
                try:
                    proc = subprocess.Popen(full, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=err,
                                            start_new_session=grouped,
                                            pass_fds=(life_r,) if grouped else ())
                except OSError as exc:
                    raise SynthesisError(f"cannot run {argv[0]}: {exc.strerror or exc}") \
                        from exc
                finally:
                    if grouped:
                        os.close(life_r)
                entry = (proc, grouped)
                with _running_lock:
                    _running.add(entry)
                try:
                    if not _exited(proc, self.timeout):
                        _kill_group(proc, grouped)
                        raise SynthesisError(
                            f"command timed out after {self.timeout:g} s: {argv[0]}")
                    # Exited, whatever its status: nothing it started may outlive it.
                    return _reap(proc, grouped)
                except BaseException:  # Ctrl-C, an error here: take the command along
                    _kill_group(proc, grouped)
                    raise
                finally:
                    with _running_lock:
                        _running.discard(entry)
        finally:
            if grouped:
                os.close(life_w)

    def __repr__(self) -> str:
        return f"CommandAdapter({self.system_id!r})"


def _fill(arg: str, values: dict[str, str]) -> str:
    # Replace only our three placeholders; other braces stay as they are.
    return re.sub(r"\{(text|instruction|out)\}", lambda m: values[m.group(1)], arg)

