"""Worker processes that do not re-run the caller's script.

Python's ``forkserver`` and ``spawn`` start methods re-import the parent's ``__main__`` in
every child (as ``__mp_main__``), so a script that calls :func:`vocencebench.benchmark` at
module level, without an ``if __name__ == "__main__":`` guard, runs again in each worker and
the pool breaks. The work vocencebench sends to its workers lives in its own modules, so the
children do not need ``__main__`` at all: :func:`worker_context` gives a ``forkserver``
context whose children skip that import. When a payload does refer to ``__main__`` (a probe
or transcriber class defined in the user's script), :func:`references_main` says so and the
caller keeps the standard context, which then needs the guard as usual.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import pickletools
import signal
import threading
from collections.abc import Callable
from multiprocessing import context, popen_forkserver, spawn
from typing import Any

__all__ = ["references_main", "worker_context"]

_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")
# popen_forkserver reads spawn.get_preparation_data at launch time; it is swapped only while
# one of our children is being launched, under this lock.
_LAUNCH_LOCK = threading.Lock()


#: How deep pickles kept inside pickles (as bytes) are looked into.
_NESTED_PICKLE_DEPTH = 4


def _mentions_main(data: bytes, depth: int) -> bool:
    for _op, arg, _pos in pickletools.genops(data):
        if isinstance(arg, str) and (arg == "__main__" or arg.startswith("__main__ ")):
            return True
        # A component travels pickled in advance (the pipeline's handles keep its pickle as
        # bytes): a class of the script inside it is only visible in that inner pickle.
        if (isinstance(arg, bytes | bytearray) and depth < _NESTED_PICKLE_DEPTH
                and arg[:1] == b"\x80"):
            try:
                if _mentions_main(bytes(arg), depth + 1):
                    return True
            except Exception:  # bytes that only start like a pickle
                continue
    return False


def references_main(*objs: object) -> bool:
    """True when pickling ``objs`` refers to anything defined in ``__main__`` (or they cannot
    be pickled at all), also inside pickles they carry as bytes: such payloads need the
    standard start method and its main import."""
    for obj in objs:
        try:
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return True
        if _mentions_main(data, 0):
            return True
    return False


def _without_main(real: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    def prepare(name: str) -> dict[str, Any]:
        data = real(name)
        for key in _MAIN_KEYS:
            data.pop(key, None)
        return data

    return prepare


class _QuietPopen(popen_forkserver.Popen):
    """A forkserver launch that a Ctrl-C cannot tear.

    A Ctrl-C raised while the launch waits for the forkserver's answer left a worker the pool
    never learnt of: it started anyway, found the interrupted pool's semaphores gone and
    printed a traceback under the run's one line. So a Ctrl-C is held back for the length of
    the launch (in the main thread, where Python raises it), the worker is then killed, and
    the signal delivered again with the handler it would have met. And the first launch
    starts the forkserver, a fresh interpreter that ignores SIGINT only once its main() runs:
    started with SIGINT blocked, it and every worker it forks inherit the mask (CPython's own
    protection of its resource tracker, bpo-33613), so a Ctrl-C in that instant cannot make
    it print a traceback either.
    """

    def _launch(self, process_obj: Any) -> None:
        held: list[int] = []
        old_handler: Any = None
        # (a handler installed outside Python reads as None and could not be put back)
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is not None):
            old_handler = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
        old_mask = (signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                    if hasattr(signal, "pthread_sigmask") else None)
        try:
            super()._launch(process_obj)  # type: ignore[misc]
        finally:
            if old_mask is not None:  # a SIGINT this thread held back is recorded now
                signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
            if old_handler is not None:
                signal.signal(signal.SIGINT, old_handler)
            if held:
                pid = getattr(self, "pid", None)
                if pid:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                signal.raise_signal(signal.SIGINT)


class _NoMainPopen(_QuietPopen):
    def _launch(self, process_obj: Any) -> None:
        with _LAUNCH_LOCK:
            real = spawn.get_preparation_data
            spawn.get_preparation_data = _without_main(real)  # type: ignore[assignment]
            try:
                super()._launch(process_obj)
            finally:
                spawn.get_preparation_data = real  # type: ignore[assignment]


class _QuietProcess(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _QuietPopen(process_obj)


class _NoMainProcess(context.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _NoMainPopen(process_obj)


class _QuietContext(context.ForkServerContext):
    Process = _QuietProcess  # type: ignore[assignment]


class _NoMainContext(context.ForkServerContext):
    Process = _NoMainProcess  # type: ignore[assignment]


def worker_context(*, import_main: bool = False) -> multiprocessing.context.BaseContext:
    """The start method for vocencebench's worker pools: ``forkserver`` (safe beside threads),
    without re-importing ``__main__`` unless ``import_main``; ``spawn`` where the platform has
    no forkserver."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    if import_main:
        return _QuietContext()
    return _NoMainContext()
