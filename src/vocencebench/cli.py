"""The ``vocencebench`` command line: a thin layer over the public API.

Each command group lives in its own module under ``vocencebench.commands`` and exposes
``register(subparsers)``; this module only assembles them and turns expected failures
(:class:`~vocencebench.errors.VocenceError`) into one clear line and a non-zero exit. The
exit statuses (:data:`EXIT_USAGE`, :data:`EXIT_INCOMPLETE`, :data:`EXIT_INTERRUPTED`) are
defined once, in :mod:`vocencebench.constants`, and re-exported here; the command modules
never import this one.

**Interrupts from the first instruction.** This module and the package's ``__init__`` import
nothing when they are loaded (``sys``, ``os`` and the built-in ``_signal`` are loaded by the
interpreter before any of our code runs, so importing them does no import work); the first
thing :func:`main` does is install the SIGINT/SIGTERM handler, and everything else — argparse,
the command modules, numpy — is imported after it, inside the block that turns an interrupt
into one line and exit status 130. A second signal while the first is being handled stops at
once (same line, same status), and after the command has finished the handler stays in place
until the interpreter exits, so Ctrl-C during the last clean-up is the same one line.
"""

# Nothing is imported here that the interpreter has not loaded already: no
# ``from __future__ import annotations`` (a real import of ``__future__``), no typing, no
# argparse. Annotations name their types as strings; ``TYPE_CHECKING`` is False at run time.
import os
import sys

try:
    import _signal as _sig  # type: ignore[import-not-found]  # built in, already loaded
except ImportError:  # pragma: no cover - a Python without the built-in module
    import signal as _sig

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import FrameType

# The statuses are served by __getattr__ below (importing them here would be import work).
__all__ = ["EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_USAGE",  # noqa: F822
           "build_parser", "main"]

# Command modules, in the order `vocencebench --help` lists them.
_COMMAND_MODULES = (
    "vocencebench.commands.run",
    "vocencebench.commands.report",
    "vocencebench.commands.decide",
    "vocencebench.commands.corpus",
    "vocencebench.commands.judge",
    "vocencebench.commands.listen",
    "vocencebench.commands.calibrate",
    "vocencebench.commands.cache",
    "vocencebench.commands.redteam",
    "vocencebench.commands.leaderboard",
)

#: The one line an interrupted command prints (standard error).
_INTERRUPTED_LINE = ("vocencebench: interrupted; finished work is kept in the cache, run the "
                     "same command to resume.\n")
#: 128 + SIGINT; the same value as ``constants.EXIT_INTERRUPTED`` (checked by a test), repeated
#: here because the handler must work before that module is imported.
_EXIT_INTERRUPTED = 130


def __getattr__(name: str) -> object:
    # The re-exported statuses and the version load on first use, not with this module.
    if name in ("EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_USAGE"):
        from .constants import EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_USAGE

        return {"EXIT_INCOMPLETE": EXIT_INCOMPLETE, "EXIT_INTERRUPTED": EXIT_INTERRUPTED,
                "EXIT_USAGE": EXIT_USAGE}[name]
    if name == "__version__":
        from .constants import PACKAGE_VERSION

        return PACKAGE_VERSION
    raise AttributeError(f"module 'vocencebench.cli' has no attribute {name!r}")


class _Interrupts:
    """SIGINT and SIGTERM while :func:`main` runs: the first raises ``KeyboardInterrupt`` in
    the main thread (so every ``finally`` and ``with`` cleans up: workers, commands, the
    cache); a later one — while that clean-up runs, or once the command is over — prints the
    line and ends the process at once with status 130 (its children die with it: see
    :mod:`vocencebench._util.procs`)."""

    def __init__(self) -> None:
        self.stopping = False
        self.said = False
        self.previous: dict[int, object] = {}

    def say(self) -> None:
        if not self.said:
            self.said = True
            try:
                sys.stderr.write(_INTERRUPTED_LINE)
                sys.stderr.flush()
            except (OSError, ValueError):  # a closed or broken stderr: nothing to tell
                pass

    def handle(self, signum: int, frame: "FrameType | None") -> None:
        if not self.stopping:
            self.stopping = True
            raise KeyboardInterrupt(f"signal {signum}")
        # (try/except, not contextlib.suppress: contextlib may not be imported yet)
        try:  # noqa: SIM105  # what was printed before the signal still reaches its reader
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        self.say()
        os._exit(_EXIT_INTERRUPTED)

    def install(self) -> None:
        for sig in (_sig.SIGINT, _sig.SIGTERM):
            try:
                old = _sig.getsignal(sig)
                # An ignored SIGINT stays ignored (a background job; Python does the same).
                if not (sig == _sig.SIGINT and old == _sig.SIG_IGN):
                    _sig.signal(sig, self.handle)
                    self.previous[sig] = old
            except ValueError:  # not the main thread: signals are the main thread's
                return

    def restore(self) -> None:
        for sig, old in self.previous.items():
            try:  # noqa: SIM105  (as above: no contextlib)
                _sig.signal(sig, old)
            except (ValueError, TypeError):  # pragma: no cover - a handler we cannot reinstate
                pass
        self.previous.clear()


def build_parser() -> "argparse.ArgumentParser":
    import importlib

    from .commands._common import OneLineParser
    from .constants import PACKAGE_VERSION

    parser = OneLineParser(
        prog="vocencebench",
        description="Benchmark prompt-controllable text-to-speech: probes, judge, verdict.",
    )
    parser.add_argument("--version", action="version", version=f"vocencebench {PACKAGE_VERSION}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _run(argv: "Sequence[str] | None") -> int:
    from ._util.text import terminal_safe
    from .constants import EXIT_INTERRUPTED, EXIT_USAGE
    from .errors import VocenceError
    from .redact import redact

    assert EXIT_INTERRUPTED == _EXIT_INTERRUPTED
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args) or 0)
    except VocenceError as exc:
        # The message may quote a file, a server or a system: shown, never obeyed.
        print(f"vocencebench {args.command}: error: {terminal_safe(redact(exc, limit=None))}",
              file=sys.stderr)
        return EXIT_USAGE


def main(argv: "Sequence[str] | None" = None) -> int:
    """Run one command; returns its exit status.

    ``argv`` None means this is the process's entry point (the console script,
    ``python -m vocencebench``): the interrupt handler then stays installed after the
    command, until the interpreter exits. With a list (tests, a program calling the CLI) the
    previous handlers are put back before returning.
    """
    interrupts = _Interrupts()
    interrupts.install()  # the first instruction: nothing has been imported yet
    try:
        try:
            return _run(argv)
        except KeyboardInterrupt:
            interrupts.stopping = True  # a signal from here on ends the process at once
            interrupts.say()
            return _EXIT_INTERRUPTED
    finally:
        if argv is None:
            interrupts.stopping = True  # exiting: a signal now is the line and status 130
        else:
            interrupts.restore()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
