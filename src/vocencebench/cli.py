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
into one line and exit status 130. SIGHUP (the terminal closed, an ssh session dropped) is
handled as SIGTERM is, unless it was ignored when the process started (``nohup``), as an
ignored SIGINT stays ignored. A second signal while the first is being handled stops at
once (same line, same status), and after the command has finished the handler stays in place
until the interpreter exits, so Ctrl-C during the last clean-up is the same one line.

**Once a signal has arrived, the run ends as interrupted**, whatever became of the
``KeyboardInterrupt`` the handler raised: one Python swallowed (raised inside a weakref
callback or a ``__del__``, where Python can only print "Exception ignored") is delivered again
and never printed, an error it turned into (an extension module's start-up reports it as an
``ImportError``, say) is reported as the interruption, and a command that went on to the end
anyway still ends with the line and status 130 (what it wrote by then is kept: the rerun
resumes from the cache). Only a command that ends *by* an interrupt (``listen --serve``) says
so, by setting ``interrupt_handled`` on its arguments.

**A closed standard output** (``vocencebench decide ... | head -1``) ends the command quietly
with :data:`EXIT_BROKEN_PIPE` (141, 128 + SIGPIPE, the shell's convention), never a
traceback: the dead stream is pointed at ``os.devnull`` so that the interpreter's last flush
cannot fail again (the recipe of Python's ``signal`` documentation).
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
    from collections.abc import Callable, Sequence
    from types import FrameType

# The statuses are served by __getattr__ below (importing them here would be import work).
__all__ = ["EXIT_BROKEN_PIPE", "EXIT_INCOMPLETE", "EXIT_INTERRUPTED",  # noqa: F822
           "EXIT_USAGE", "build_parser", "interrupt_received", "main"]

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
#: The line of a command run with ``--no-cache``: it kept nothing to resume from.
_INTERRUPTED_NO_CACHE_LINE = ("vocencebench: interrupted; nothing was kept (--no-cache), so the "
                              "same command starts again from nothing.\n")
#: 128 + SIGINT; the same value as ``constants.EXIT_INTERRUPTED`` (checked by a test), repeated
#: here because the handler must work before that module is imported.
_EXIT_INTERRUPTED = 130
#: 128 + SIGPIPE (``constants.EXIT_BROKEN_PIPE``, checked by a test), repeated here for the
#: same reason: a closed pipe can end even ``--help``, before that module is imported.
_EXIT_BROKEN_PIPE = 141
#: How often a swallowed interrupt is delivered again (it lands in the next bytecodes; a
#: second one swallowed as well is rare, and the check when the command returns remains).
_REDELIVERIES = 10

#: The handlers of the :func:`main` calls running now (one, but main() may be re-entered by a
#: program that calls it): read by :func:`interrupt_received`.
_ACTIVE: "list[_Interrupts]" = []


def __getattr__(name: str) -> object:
    # The re-exported statuses and the version load on first use, not with this module.
    if name in ("EXIT_BROKEN_PIPE", "EXIT_INCOMPLETE", "EXIT_INTERRUPTED", "EXIT_USAGE"):
        from . import constants

        return getattr(constants, name)
    if name == "__version__":
        from .constants import PACKAGE_VERSION

        return PACKAGE_VERSION
    raise AttributeError(f"module 'vocencebench.cli' has no attribute {name!r}")


class _Interrupts:
    """SIGINT, SIGTERM and SIGHUP while :func:`main` runs: the first raises
    ``KeyboardInterrupt`` in the main thread (so every ``finally`` and ``with`` cleans up:
    workers, commands, the cache); a later one — while that clean-up runs, or once the command
    is over — prints the line and ends the process at once with status 130 (its children die
    with it: see :mod:`vocencebench._util.procs`). ``received`` stays set once any signal has
    arrived; ``raised`` is the ``KeyboardInterrupt`` last raised, so that the
    ``sys.unraisablehook`` installed with the handlers recognises it when Python swallows it."""

    def __init__(self) -> None:
        self.stopping = False
        self.received = False
        self.said = False
        self.line = _INTERRUPTED_LINE
        self.signum: int | None = None
        self.raised: BaseException | None = None
        self.redelivered = 0
        self.in_hook = False
        self.previous: dict[int, object] = {}
        self.previous_hook: Callable[[sys.UnraisableHookArgs], object] | None = None

    def say(self) -> None:
        if not self.said:
            self.said = True
            try:
                sys.stderr.write(self.line)
                sys.stderr.flush()
            except (OSError, ValueError):  # a closed or broken stderr: nothing to tell
                pass

    def stop(self) -> int:
        """The end of an interrupted command: the line (once), status 130; a signal from here
        on ends the process at once."""
        self.stopping = True
        self.say()
        return _EXIT_INTERRUPTED

    def handle(self, signum: int, frame: "FrameType | None") -> None:
        self.received = True
        if self.in_hook:  # a redelivery due while unraisable() runs: raised here, it would be
            self.redeliver(signum)  # swallowed again; due again once that hook has returned
            return
        if not self.stopping:
            self.stopping = True
            self.signum = signum
            self.raised = KeyboardInterrupt(f"signal {signum}")
            raise self.raised
        # (try/except, not contextlib.suppress: contextlib may not be imported yet)
        try:  # noqa: SIM105  # what was printed before the signal still reaches its reader
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        self.say()
        os._exit(_EXIT_INTERRUPTED)

    @staticmethod
    def redeliver(signum: int) -> None:
        """Make ``signum`` due again in the main thread (``_thread.interrupt_main``), from a
        thread of its own: made due from the main thread, it would be handled at that
        thread's next instruction, still inside the hook that asks for it."""
        try:
            import _thread

            _thread.start_new_thread(_thread.interrupt_main, (signum,))  # type: ignore[arg-type]
        except (ImportError, RuntimeError):  # pragma: no cover - no threads
            pass  # the check when the command returns still ends it as interrupted

    def unraisable(self, info: "sys.UnraisableHookArgs") -> None:
        """``sys.unraisablehook``: the ``KeyboardInterrupt`` :meth:`handle` raised, swallowed
        where Python cannot pass an exception on (an import lock's weakref callback, a
        ``__del__``), is not printed but delivered again, so that the command still stops
        now and cleans up; anything else goes to the previous hook."""
        if self.raised is None or info.exc_value is not self.raised:
            (self.previous_hook or sys.__unraisablehook__)(info)
            return
        self.raised = None
        if self.signum is None or self.redelivered >= _REDELIVERIES:
            return  # the check when the command returns still ends it as interrupted
        self.redelivered += 1
        self.stopping = False  # the redelivery raises again instead of ending at once
        self.in_hook = True
        try:
            self.redeliver(self.signum)
        finally:
            self.in_hook = False

    def install(self) -> None:
        _ACTIVE.append(self)
        for name in ("SIGINT", "SIGTERM", "SIGHUP"):
            sig = getattr(_sig, name, None)
            if sig is None:  # pragma: no cover - no SIGHUP (Windows)
                continue
            try:
                old = _sig.getsignal(sig)
                # An ignored SIGINT stays ignored (a background job; Python does the same), and
                # so does an ignored SIGHUP (`nohup`: the run must outlive its terminal).
                if not (name != "SIGTERM" and old == _sig.SIG_IGN):
                    _sig.signal(sig, self.handle)
                    self.previous[sig] = old
            except ValueError:  # not the main thread: signals are the main thread's
                return
        self.previous_hook = sys.unraisablehook
        sys.unraisablehook = self.unraisable

    def restore(self) -> None:
        for sig, old in self.previous.items():
            try:  # noqa: SIM105  (as above: no contextlib)
                _sig.signal(sig, old)
            except (ValueError, TypeError):  # pragma: no cover - a handler we cannot reinstate
                pass
        self.previous.clear()
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        if sys.unraisablehook == self.unraisable and self.previous_hook is not None:
            sys.unraisablehook = self.previous_hook


def interrupt_received() -> bool:
    """Whether a running :func:`main` has received SIGINT, SIGTERM or SIGHUP: then a failure
    that follows is the interruption, not what it looks like (read by
    :func:`vocencebench._util.deps.require`, so that an optional module whose start-up was
    interrupted is not reported as a missing extra)."""
    return any(i.received for i in _ACTIVE)


def _closed(stream: "object", *, unknown: bool) -> bool:
    """Whether ``stream`` (standard output or error) writes to a pipe or socket whose reader
    has gone; it is then pointed at ``os.devnull``, so that the interpreter's last flush of it
    cannot fail again (the recipe of Python's ``signal`` documentation). ``unknown``: the
    answer for a stream that is no file (a test's capture)."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return unknown
    try:
        import select

        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        gone = any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poll.poll(0))
    except (ImportError, AttributeError, OSError, ValueError):  # pragma: no cover
        gone = True  # no poll(): cannot tell, so take the error to be the pipe's
    if gone:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, fd)
            finally:
                os.close(devnull)
        except OSError:  # pragma: no cover
            pass
    return gone


def _closed_output() -> bool:
    """After a ``BrokenPipeError``: whether standard output's (or error's) reader has gone
    (:func:`_closed`). False when both are sound: the error came from elsewhere."""
    # Both (each dead one to devnull); a stream that is no file: the likeliest source, then.
    out, err = _closed(sys.stdout, unknown=True), _closed(sys.stderr, unknown=True)
    return out or err


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


def _command_name(args: "argparse.Namespace") -> str:
    """The command as typed: ``corpus check``, ``cache check``, ``judge agree``, ``run``."""
    sub = getattr(args, f"{args.command}_command", None)
    return f"{args.command} {sub}" if isinstance(sub, str) and sub else str(args.command)


def _run(argv: "Sequence[str] | None", interrupts: _Interrupts) -> int:
    from ._util.text import terminal_safe
    from .constants import EXIT_INTERRUPTED, EXIT_USAGE
    from .errors import VocenceError
    from .redact import redact

    assert EXIT_INTERRUPTED == _EXIT_INTERRUPTED
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        # --help, --version: a closed pipe is BrokenPipeError here, or (standard output
        # unbuffered) an error argparse has already ignored.
        sys.stdout.flush()
        if exc.code == 0 and _closed(sys.stdout, unknown=False):
            return _EXIT_BROKEN_PIPE
        raise
    if getattr(args, "no_cache", False):
        interrupts.line = _INTERRUPTED_NO_CACHE_LINE
    if not getattr(args, "func", None):
        parser.print_help()
        sys.stdout.flush()
        return EXIT_USAGE
    try:
        status = int(args.func(args) or 0)
    except VocenceError as exc:
        if interrupts.received:
            raise  # what the interrupt became: main() reports the interruption
        import contextlib

        # What the command printed first (a run's summary) comes first; a reader that has
        # gone does not hide the error line.
        with contextlib.suppress(BrokenPipeError):
            sys.stdout.flush()
        # The message may quote a file, a server or a system: shown, never obeyed.
        print(f"vocencebench {_command_name(args)}: error: "
              f"{terminal_safe(redact(exc, limit=None))}", file=sys.stderr)
        status = EXIT_USAGE
    if interrupts.received and not getattr(args, "interrupt_handled", False):
        # The KeyboardInterrupt was lost on its way and the command went on to the end.
        raise KeyboardInterrupt("a signal was received while the command ran")
    sys.stdout.flush()  # inside the command's time: a closed pipe is BrokenPipeError here
    return status


def main(argv: "Sequence[str] | None" = None) -> int:
    """Run one command; returns its exit status.

    ``argv`` None means this is the process's entry point (the console script,
    ``python -m vocencebench``): the interrupt handler then stays installed after the
    command, until the interpreter exits. With a list (tests, a program calling the CLI) the
    previous handlers are put back before returning.

    Statuses of its own: 130 (:data:`EXIT_INTERRUPTED`) once SIGINT, SIGTERM or SIGHUP has
    arrived, whatever the command did after it; 141 (:data:`EXIT_BROKEN_PIPE`) when standard
    output's reader has gone (a ``BrokenPipeError`` with that pipe closed; any other
    ``BrokenPipeError`` is a failure like any other).
    """
    interrupts = _Interrupts()
    interrupts.install()  # the first instruction: nothing has been imported yet
    try:
        try:
            return _run(argv, interrupts)
        except KeyboardInterrupt:
            return interrupts.stop()
        except BaseException as exc:
            if interrupts.received:  # an error that follows a signal is the interruption
                return interrupts.stop()
            if isinstance(exc, BrokenPipeError) and _closed_output():
                return _EXIT_BROKEN_PIPE  # quiet: the reader has what it wanted
            raise
    finally:
        if argv is None:
            interrupts.stopping = True  # exiting: a signal now is the line and status 130
        else:
            interrupts.restore()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
